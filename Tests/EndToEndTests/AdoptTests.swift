import CastBase
import CastProtocol
import CastTestSupport
import Foundation
import XCTest

/// A receiver that plays alone becomes a group without stopping (docs/multiroom.md, "A receiver that plays alone
/// becomes a group"): `cast move NAME --to OTHER --keep` while `cast send` plays on NAME alone. NAME's castd tells
/// where its playback is anchored (`anchor`), the group takes that as its timeline, NAME plays on and OTHER joins it
/// in step. Measured from outside castd, as GroupTests measures: each room's castd (in a time namespace of its own,
/// 3 and 7 s ahead) writes its sound into a FIFO this test reads, stamping each read on arrival.
final class AdoptTests: LabTestCase {
    override class var labPrefix: String { "e2ad" }
    override class var labRooms: Int { 2 }

    /// Bytes per second of the capture: S16 stereo at 48 kHz.
    let rate = 192_000.0

    /// When byte 0 of a capture was played on this process's clock, judged from `reads` (a read arrives no earlier
    /// than its bytes were played): the earliest of `arrival − bytes before it / rate`.
    private func origin(of reads: some Collection<FIFOCapture.Read>) -> Double {
        reads.map { Double($0.arrival) / 1e9 - Double($0.total) / rate }.min() ?? .nan
    }

    func testAReceiverThatPlaysAloneBecomesAGroupWithoutStopping() throws {
        let kitchen = try startCapturingRoom("Kitchen", on: .room1, folder: "kitchen", shift: 3)
        let living = try startCapturingRoom("Living Room", on: .room2, folder: "living", shift: 7)
        let seconds = 12
        let clip = try beeps(seconds: seconds)
        let (sender, asked) = try playOnKitchenThenKeepItWithTheLivingRoom(kitchen, clip: clip)
        XCTAssertTrue(sender.output.contains { $0.hasSuffix("(Kitchen plays on)") }, "\(sender.output)")
        let status = try castOnPhone(["status", "Living Room", "--json"])
        let object = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any], status.stderr)
        XCTAssertEqual(object["state"] as? String, "playing", status.stdout)
        XCTAssertEqual(Set(object["group"] as? [String] ?? []), ["Kitchen", "Living Room"], status.stdout)
        // The kitchen is aligned to the timeline its anchor began (its `sync` in `status`, once a second).
        var sync: [String: Double] = [:]
        XCTAssertTrue(
            waitUntil(timeout: 10) {
                guard let status = try? self.castOnPhone(["status", "Kitchen", "--json"]),
                    let object = try? JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
                else { return false }
                sync = object["sync"] as? [String: Double] ?? [:]
                return !sync.isEmpty
            }, "the kitchen was never aligned")
        print("adopt: the kitchen's sync \(sync)")
        XCTAssertLessThan(abs(sync["offsetSeconds"] ?? 1), 0.001, "the kitchen is off its own anchor's timeline")
        XCTAssertEqual(sender.waitForExit(timeout: 60), 0, "\(sender.output)")
        XCTAssertTrue(sender.output.contains("finished: playbackEnded"), "\(sender.output)")

        let kitchenReads = kitchen.capture.stop(atLeast: 0)
        let livingReads = living.capture.stop(atLeast: 0)
        let kitchenTotal = try XCTUnwrap(kitchenReads.last, "the kitchen wrote nothing").total
        let livingTotal = try XCTUnwrap(livingReads.last, "the living room wrote nothing").total
        // The kitchen played on: its longest silence between two reads around the join, and where its stream stood
        // before the join and after it (a pause, or a restart, moves it by as long as it lasted).
        let longest =
            kitchenReads.indices.dropFirst().map {
                Double(kitchenReads[$0].arrival - kitchenReads[$0 - 1].arrival) / 1e9
            }.max() ?? .nan
        let before = kitchenReads.filter { Double($0.arrival) / 1e9 < asked }
        let joined = Double(seconds) - Double(livingTotal) / rate  // where in the file the living room began
        // castd writes the file's last moment as soon as it has it (it drains): the last half second is left out.
        let after = kitchenReads.filter {
            Double($0.total) / rate > joined + 1 && Double($0.total) / rate < Double(seconds) - 0.5
        }
        let shift = origin(of: after) - origin(of: before)
        // The living room's first samples against the kitchen's same place in the file.
        let apart =
            origin(of: livingReads.filter { Double($0.total) / rate < Double(livingTotal) / rate - 0.5 })
            - (origin(of: after) + joined)
        print(
            String(
                format:
                    "adopt: asked at %.3f s of the file; the living room from %.3f s; the kitchen's longest silence "
                    + "%.1f ms, its stream moved %.3f ms, %.3f s of it in all (the file: %d s); the two %.3f ms apart",
                Double(before.last?.total ?? 0) / rate, joined, longest * 1000, shift * 1000,
                Double(kitchenTotal) / rate, seconds, apart * 1000))
        // No pause and no restart: every part of the file once, its stream where it was (a restart paused it about
        // 0.45 s and played 0.15-0.19 s of the file again).
        XCTAssertEqual(Double(kitchenTotal) / rate, Double(seconds), accuracy: 0.05, "the kitchen played a part twice")
        XCTAssertLessThan(longest, 0.2, "the kitchen paused")
        XCTAssertEqual(shift, 0, accuracy: 0.02, "the kitchen's stream moved: it paused or jumped")
        XCTAssertEqual(joined, 3.6, accuracy: 2, "the living room began far from where the kitchen was")
        // In step (how close is printed; a start on its own would be tens of milliseconds off or more).
        XCTAssertEqual(apart, 0, accuracy: 0.01, "the two do not play in step")
    }

    /// `cast queue a.flac b.flac --to Kitchen` and `cast join "Living Room" --to Kitchen` during the first: the kitchen
    /// plays on into the group, and the second file starts on the group (the living room plays it too, over the
    /// connection it joined with), the kitchen playing each file once.
    func testAQueueGoesOnOnTheGroupItsFirstReceiverPlayedOnInto() throws {
        let kitchen = try startCapturingRoom("Kitchen", on: .room1, folder: "kitchen", shift: 3)
        let living = try startCapturingRoom("Living Room", on: .room2, folder: "living", shift: 7)
        let first = try beeps(seconds: 6, name: "a.flac")
        let second = try beeps(seconds: 4, name: "b.flac")
        let sender = try lab.start(
            on: .phone, [Paths.cast, "queue", first, second, "--to", "Kitchen"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        XCTAssertTrue(waitUntil(timeout: 30) { Double(kitchen.capture.total) >= 2 * self.rate }, "\(sender.output)")
        let joined = try castOnPhone(["join", "Living Room", "--to", "Kitchen"])
        XCTAssertEqual(joined.status, 0, joined.stderr)
        // `cast join` connected to the living room, and the sender did: no one after them.
        func connections() -> Int { living.daemon.output.filter { $0.contains("connected from") }.count }
        let afterJoin = connections()
        XCTAssertEqual(sender.waitForExit(timeout: 60), 0, "\(sender.output)")
        XCTAssertEqual(
            sender.output.filter { $0.hasPrefix("track ") }, ["track 1/2: \(first)", "track 2/2: \(second)"])
        XCTAssertTrue(sender.output.contains { $0.hasSuffix("(Kitchen plays on)") }, "\(sender.output)")
        let kitchenPlayed = Double(kitchen.capture.stop(atLeast: Int(rate) * 10).last?.total ?? 0) / rate
        let livingPlayed = Double(living.capture.stop(atLeast: Int(rate) * 4).last?.total ?? 0) / rate
        print(
            String(
                format: "adopt queue: the kitchen played %.3f s, the living room %.3f s", kitchenPlayed, livingPlayed))
        XCTAssertEqual(kitchenPlayed, 10, accuracy: 0.05, "the kitchen played each file once")
        // Part of the first file, then the whole second one.
        XCTAssertGreaterThan(livingPlayed, 4.5, "the living room did not play the second file")
        XCTAssertEqual(connections(), afterJoin, "the second file came to the living room over a new connection")
    }
}
