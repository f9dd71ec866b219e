import CastBase
import CastProtocol
import CastTestSupport
import Foundation
import XCTest

/// `cast move NAME --to OTHER --keep` when NAME plays alone: the `cast send` that plays there makes a group of the two
/// (docs/multiroom.md "Moving between rooms"). Measured from outside castd, as MoveTests measures: each room's castd
/// writes its sound into a FIFO this test reads, stamping each read on arrival.
final class MoveAloneTests: LabTestCase {
    override class var labPrefix: String { "gmmove" }
    override class var labRooms: Int { 2 }

    /// Bytes per second of the capture: S16 stereo at 48 kHz.
    let rate = 192_000.0

    /// When a stretch of sound began on this process's clock: the earliest of `arrival − bytes before it / rate` over
    /// its reads (a read arrives no earlier than its bytes were played), `from` being the stretch's first byte.
    private func origin(of reads: ArraySlice<FIFOCapture.Read>, from: Int) -> Double {
        reads.map { Double($0.arrival) / 1e9 - Double($0.total - from) / rate }.min() ?? .nan
    }

    /// The kitchen plays alone; `cast move Kitchen --to "Living Room" --keep` 3 s in: the living room joins and the two
    /// play the rest of the file as a group, in step, from where the kitchen was (the kitchen starts again there with
    /// the living room, after a pause: the figure is printed), and `cast send` ends with playbackEnded, exit 0.
    func testAReceiverAloneBecomesAGroupOfTwoWithKeep() throws {
        let kitchen = try startCapturingRoom("Kitchen", on: .room1, folder: "kitchen")
        let living = try startCapturingRoom("Living Room", on: .room2, folder: "living")
        let seconds = 12
        let clip = try beeps(seconds: seconds)
        let sender = try lab.start(
            on: .phone, [Paths.cast, "send", clip, "--to", "Kitchen"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        XCTAssertTrue(waitUntil(timeout: 30) { Double(kitchen.capture.total) >= 3 * self.rate }, "\(sender.output)")

        let kept = try castOnPhone(["move", "Kitchen", "--to", "Living Room", "--keep"])
        XCTAssertEqual(kept.status, 0, kept.stderr)
        XCTAssertEqual(kept.stdout, "Living Room plays in the group of Kitchen\n")
        XCTAssertNotNil(
            sender.waitForLine(containing: "cast: Living Room joins: Kitchen and Living Room play as a group from"),
            "\(sender.output)")
        let status = try castOnPhone(["status", "Kitchen", "--json"])
        let object = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any], status.stderr)
        XCTAssertEqual(object["state"] as? String, "playing", status.stdout)
        XCTAssertEqual(Set(object["group"] as? [String] ?? []), ["Kitchen", "Living Room"], status.stdout)
        XCTAssertEqual(sender.waitForExit(timeout: 60), 0, "\(sender.output)")
        XCTAssertTrue(sender.output.contains("finished: playbackEnded"), "\(sender.output)")
        XCTAssertFalse(sender.output.contains("finished: userExited"), "\(sender.output)")

        let kitchenReads = kitchen.capture.stop(atLeast: 0)
        let livingReads = living.capture.stop(atLeast: 0)
        // The kitchen's pause: its longest silence between two reads.
        let pause = try XCTUnwrap(
            kitchenReads.indices.dropFirst().max {
                kitchenReads[$0].arrival - kitchenReads[$0 - 1].arrival
                    < kitchenReads[$1].arrival - kitchenReads[$1 - 1].arrival
            }, "the kitchen wrote once")
        let reached = Double(kitchenReads[pause - 1].total) / rate
        let livingTotal = try XCTUnwrap(livingReads.last, "the living room wrote nothing").total
        let started = Double(seconds) - Double(livingTotal) / rate
        let restarted = Double(seconds) - Double(kitchenReads.last!.total - kitchenReads[pause - 1].total) / rate
        let kitchenOrigin = origin(of: kitchenReads[pause...], from: kitchenReads[pause - 1].total)
        let livingOrigin = origin(of: livingReads[...], from: 0)
        let gap = Double(kitchenReads[pause].arrival - kitchenReads[pause - 1].arrival) / 1e9
        print(
            String(
                format:
                    "move --keep alone: the kitchen wrote up to %.3f s, then both played from %.3f s (the living room) "
                    + "and %.3f s (the kitchen), %.2f ms apart; the kitchen paused %.0f ms",
                reached, started, restarted, (livingOrigin - kitchenOrigin) * 1000, gap * 1000))
        XCTAssertEqual(started, reached, accuracy: 0.5, "the group did not start where the kitchen was")
        XCTAssertEqual(restarted, started, accuracy: 0.05, "the two did not play the same part of the file")
        // In step: the same instant for the same place in the file (GroupTests measures how close; a restart of each
        // on its own would be tens of milliseconds apart or more).
        XCTAssertEqual(livingOrigin, kitchenOrigin, accuracy: 0.01, "the two do not play in step")
    }

    /// `cast join "Living Room" --to Kitchen` while the kitchen plays alone does the same (a group of two), and the
    /// kitchen named twice is a usage error.
    func testJoiningAReceiverThatPlaysAloneMakesAGroupOfTwo() throws {
        let kitchen = try startCapturingRoom("Kitchen", on: .room1, folder: "kitchen")
        let living = try startCapturingRoom("Living Room", on: .room2, folder: "living")
        let clip = try beeps(seconds: 8)
        let sender = try lab.start(
            on: .phone, [Paths.cast, "send", clip, "--to", "Kitchen"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        XCTAssertTrue(waitUntil(timeout: 30) { Double(kitchen.capture.total) >= 2 * self.rate }, "\(sender.output)")
        let itself = try castOnPhone(["join", "Kitchen", "--to", "Kitchen"])
        XCTAssertEqual(itself.status, 2, itself.stderr)

        let joined = try castOnPhone(["join", "Living Room", "--to", "Kitchen"])
        XCTAssertEqual(joined.status, 0, joined.stderr)
        XCTAssertEqual(joined.stdout, "Living Room plays in the group of Kitchen\n")
        XCTAssertEqual(sender.waitForExit(timeout: 60), 0, "\(sender.output)")
        XCTAssertTrue(sender.output.contains("finished: playbackEnded"), "\(sender.output)")
        XCTAssertGreaterThan(living.capture.stop(atLeast: 0).last?.total ?? 0, Int(rate), "the living room played")
        _ = kitchen.capture.stop(atLeast: 0)
    }
}
