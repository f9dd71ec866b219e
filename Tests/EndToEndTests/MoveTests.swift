import CastBase
import CastProtocol
import CastTestSupport
import Foundation
import XCTest

/// `cast move NAME --to OTHER` end to end (docs/multiroom.md): two castd in two rooms of the lab, each playing into a
/// FIFO this test reads (stamping each read with its CLOCK_MONOTONIC on arrival), and `cast send` on the phone.
///
/// Where the other receiver starts is measured from what it writes: the clip is `seconds` long, so a receiver that
/// plays it from position P to its end writes `(seconds − P) × rate` bytes; the first receiver, from 0, wrote
/// `Q × rate` bytes until it stopped. The move is right when P is Q (less what the first one played while the
/// sender reached the other: the figure is printed), and the gap is the other's first read less the first one's last.
final class MoveTests: LabTestCase {
    override class var labPrefix: String { "mov" }
    override class var labRooms: Int { 3 }

    /// Bytes per second of the capture: S16 stereo at 48 kHz.
    let rate = 192_000.0

    /// `cast send clip --to Kitchen`, then `cast move Kitchen --to "Living Room"` 3 s in: the living room plays the
    /// rest of the clip from where the kitchen was, the kitchen stops, and `cast send` ends with playbackEnded, exit 0.
    func testWhatPlaysMovesToAnotherRoomAtItsPosition() throws {
        let kitchen = try startCapturingRoom("Kitchen", on: .room1, folder: "kitchen")
        let living = try startCapturingRoom("Living Room", on: .room2, folder: "living")
        let seconds = 10
        let clip = try beeps(seconds: seconds)
        // Nothing plays yet: exit 1; a receiver nobody sees: exit 3.
        let idle = try castOnPhone(["move", "Kitchen", "--to", "Living Room"])
        XCTAssertEqual(idle.status, 1, idle.stderr)
        XCTAssertTrue(idle.stderr.contains("nothing plays on Kitchen"), idle.stderr)

        let sender = try lab.start(
            on: .phone, [Paths.cast, "send", clip, "--to", "Kitchen"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        kitchen.capture.waitForTotal(Int(rate) * 3)
        let unknown = try castOnPhone(["move", "Kitchen", "--to", "Attic", "--timeout", "1"])
        XCTAssertEqual(unknown.status, 3, unknown.stderr)

        let moved = try castOnPhone(["move", "Kitchen", "--to", "Living Room"])
        XCTAssertEqual(moved.status, 0, moved.stderr)
        XCTAssertTrue(moved.stdout.hasPrefix("Living Room plays what Kitchen played, from "), moved.stdout)
        XCTAssertEqual(sender.waitForExit(timeout: 60), 0, "\(sender.output)")
        XCTAssertTrue(sender.output.contains("finished: playbackEnded"), "\(sender.output)")
        XCTAssertFalse(sender.output.contains("finished: userExited"), "\(sender.output)")
        let kitchenReads = kitchen.capture.stop(atLeast: 0)
        let livingReads = living.capture.stop(atLeast: 0)
        let kitchenLast = try XCTUnwrap(kitchenReads.last, "the kitchen wrote nothing")
        let livingFirst = try XCTUnwrap(livingReads.first, "the living room wrote nothing")
        let livingBytes = try XCTUnwrap(livingReads.last).total
        let reached = Double(kitchenLast.total) / rate
        let started = Double(seconds) - Double(livingBytes) / rate
        let gap = Double(livingFirst.arrival - kitchenLast.arrival) / 1e9
        // The living room's first beep: the next whole second of the clip after where it started.
        let onset = Capture.beepOnset(in: living.capture.bytes, from: 0).map { Double($0) / rate }
        print(
            String(
                format:
                    "move: the kitchen wrote up to %.3f s, the living room played from %.3f s (first beep %.3f s in, "
                    + "so from %.3f s); gap %.0f ms (last kitchen read → first living-room read)",
                reached, started, onset ?? -1, onset.map { ceil(started) - $0 } ?? -1, gap * 1000))
        XCTAssertGreaterThan(started, 2, "the living room played the clip from its start")
        XCTAssertEqual(started, reached, accuracy: 0.5, "the living room did not start where the kitchen was")
        // A beep cut by the start (within 50 ms of a whole second) says nothing.
        if let onset, (0.05...0.95).contains(started - floor(started)) {
            XCTAssertEqual(ceil(started) - onset, started, accuracy: 0.1, "the beeps are not where the position says")
        }
        XCTAssertLessThan(gap, 2, "the living room started long after the kitchen stopped")
    }

    /// In a group (`cast send clip --to Kitchen --to "Living Room"`), `cast move Kitchen --to Study` has the study join
    /// in step and then stops the kitchen: the study begins where the living room is at that instant (the living room's
    /// bytes written by the study's first read, against the study's start from its byte count), before the kitchen's
    /// last samples (no gap); `cast move Study --to Kitchen --keep` then adds the kitchen back, the study playing on
    /// (the study's byte count holds only if it played to the end), and `cast send` ends with exit 0.
    func testAGroupMemberMovesInStepWithNoGap() throws {
        let kitchen = try startCapturingRoom("Kitchen", on: .room1, folder: "kitchen")
        let living = try startCapturingRoom("Living Room", on: .room2, folder: "living")
        let study = try startCapturingRoom("Study", on: .room3, folder: "study")
        let seconds = 12
        let clip = try beeps(seconds: seconds)
        let sender = try lab.start(
            on: .phone, [Paths.cast, "send", clip, "--to", "Kitchen", "--to", "Living Room"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        kitchen.capture.waitForTotal(Int(rate) * 2)
        let moved = try castOnPhone(["move", "Kitchen", "--to", "Study"])
        XCTAssertEqual(moved.status, 0, moved.stderr)
        XCTAssertEqual(moved.stdout, "Study plays what Kitchen played\n")
        XCTAssertNotNil(sender.waitForLine(containing: "cast: Study joined the group", timeout: 10), "\(sender.output)")
        // --keep: the kitchen joins back and the study plays on with it.
        let keepAsked = MonotonicClock.nanoseconds()
        let kept = try castOnPhone(["move", "Study", "--to", "Kitchen", "--keep"])
        XCTAssertEqual(kept.status, 0, kept.stderr)
        XCTAssertEqual(kept.stdout, "Kitchen plays in the group of Study\n")
        XCTAssertEqual(sender.waitForExit(timeout: 60), 0, "\(sender.output)")
        let allKitchenReads = kitchen.capture.stop(atLeast: 0)
        let kitchenReads = allKitchenReads.filter { $0.arrival < keepAsked }
        XCTAssertTrue(allKitchenReads.contains { $0.arrival > keepAsked }, "the kitchen did not join back")
        let livingReads = living.capture.stop(atLeast: 0)
        let studyReads = study.capture.stop(atLeast: 0)
        let studyFirst = try XCTUnwrap(studyReads.first, "the study wrote nothing")
        let kitchenLast = try XCTUnwrap(kitchenReads.last, "the kitchen wrote nothing")
        let started = Double(seconds) - Double(try XCTUnwrap(studyReads.last).total) / rate
        let livingAtStart = try XCTUnwrap(
            livingReads.last { $0.arrival <= studyFirst.arrival }, "the living room was silent")
        let livingThen = Double(livingAtStart.total) / rate
        let overlap = Double(kitchenLast.arrival - studyFirst.arrival) / 1e9
        print(
            String(
                format:
                    "move in a group: the study played from %.3f s, the living room had written %.3f s by then; "
                    + "the kitchen played on %.0f ms after the study began (gap 0)", started, livingThen,
                overlap * 1000))
        XCTAssertGreaterThan(overlap, 0, "the kitchen stopped before the study played")
        XCTAssertEqual(started, livingThen, accuracy: 0.1, "the study did not start where the group was")
        XCTAssertLessThan(Double(kitchenLast.total) / rate, Double(seconds) - 1, "the kitchen played to the end")
    }
}
