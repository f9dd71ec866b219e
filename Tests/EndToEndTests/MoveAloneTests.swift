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

    /// The kitchen plays alone; `cast move Kitchen --to "Living Room" --keep` 3 s in: the living room joins and the two
    /// play the rest of the file as a group, and `cast send` ends with playbackEnded, exit 0. The kitchen's castd
    /// tells where its playback is anchored, so it plays on into the group (before the anchor it stopped and started
    /// again with the living room, pausing 0.44-0.48 s): its sound has no pause and plays each part of the file once.
    /// AdoptTests measures how close the two are and how still the kitchen's stream stays; a castd without the anchor
    /// still gets the restart (`Playlist.followMove(keep:)`).
    func testAReceiverAloneBecomesAGroupOfTwoWithKeep() throws {
        let kitchen = try startCapturingRoom("Kitchen", on: .room1, folder: "kitchen")
        let living = try startCapturingRoom("Living Room", on: .room2, folder: "living")
        let seconds = 12
        let clip = try beeps(seconds: seconds)
        let (sender, _) = try playOnKitchenThenKeepItWithTheLivingRoom(kitchen, clip: clip)
        for room in ["Kitchen", "Living Room"] {
            let status = try castOnPhone(["status", room, "--json"])
            let object = try XCTUnwrap(
                JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any], status.stderr)
            XCTAssertEqual(object["state"] as? String, "playing", status.stdout)
            // The group's names come with a member's `play`: the kitchen's was its own, alone.
            if room == "Living Room" {
                XCTAssertEqual(Set(object["group"] as? [String] ?? []), ["Kitchen", "Living Room"], status.stdout)
            }
        }
        XCTAssertEqual(sender.waitForExit(timeout: 60), 0, "\(sender.output)")
        XCTAssertTrue(sender.output.contains("finished: playbackEnded"), "\(sender.output)")
        XCTAssertFalse(sender.output.contains("finished: userExited"), "\(sender.output)")

        let kitchenReads = kitchen.capture.stop(atLeast: 0)
        let livingReads = living.capture.stop(atLeast: 0)
        let longest =
            kitchenReads.indices.dropFirst().map {
                Double(kitchenReads[$0].arrival - kitchenReads[$0 - 1].arrival) / 1e9
            }.max() ?? .nan
        let kitchenPlayed = Double(kitchenReads.last?.total ?? 0) / rate
        let livingPlayed = Double(livingReads.last?.total ?? 0) / rate
        print(
            String(
                format:
                    "move --keep alone: the kitchen played %.3f s, its longest silence %.0f ms; the living room %.3f s",
                kitchenPlayed, longest * 1000, livingPlayed))
        XCTAssertEqual(kitchenPlayed, Double(seconds), accuracy: 0.05, "the kitchen played a part of the file twice")
        XCTAssertLessThan(longest, 0.2, "the kitchen paused")
        XCTAssertGreaterThan(livingPlayed, 5, "the living room played the rest of the file")
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
