import CastBase
import CastKit
import CastProtocol
import CastTestSupport
import Foundation
import XCTest

/// A receiver selected for a group that cannot be reached when the group starts: CastKit starts a group as `cast`
/// does (`GroupPlayback.start(_:choosing:…)`), so the receiver is looked for while the others play and joins in step
/// when it comes up.
extension GroupRouteTests {
    func testAReceiverDownAtTheStartJoinsInStepWhenItComesUp() throws {
        let (kitchen, kitchenSound) = try startReceiver("Kitchen")
        let (livingRoom, livingRoomSound) = try startReceiver("Living Room")
        // The living room is down when the group starts: its castd killed, its port kept for its return.
        let port = receivers[1].port
        receivers[1].kill(signal: SIGKILL)
        let length = 14
        let player = try makePlayer(queueingBeeps: length)
        CastRoute.selection = [kitchen, livingRoom]
        player.play()
        XCTAssertTrue(waitForSound(kitchenSound, seconds: 2), "\(receivers[0].output.suffix(5))")
        XCTAssertEqual(player.activeReceivers, [kitchen], "the group starts with the receivers it reached")

        let (started, joined) = try startLivingRoom(on: port, into: livingRoomSound, "join")
        XCTAssertTrue(
            waitUntil(timeout: 3) { player.activeReceivers == [kitchen, livingRoom] },
            "\(player.activeReceivers)")
        XCTAssertTrue(
            waitUntil(timeout: Double(length) + 10) { player.playbackState == .stopped },
            "\(player.playbackState)")
        let ended = MonotonicClock.nanoseconds()
        for capture in captures { capture.stop(atLeast: 0) }
        let apart = try GroupFixtures.spread([kitchenSound, livingRoomSound], between: joined, and: ended)
        print(
            String(
                format:
                    "castkit group: a receiver down at the start, up → its first samples in %.0f ms; within %.3f ms",
                Double(joined - started) / 1e6, apart * 1000))
        XCTAssertLessThan(apart, 0.002)
        // At the group's place in the file: from its first sample on it wrote what the kitchen wrote meanwhile.
        let livingRoomSeconds = Double(livingRoomSound.total) / GroupFixtures.rate
        let kitchenSeconds = Double(kitchenSound.total - kitchenSound.total(at: joined)) / GroupFixtures.rate
        XCTAssertEqual(livingRoomSeconds, kitchenSeconds, accuracy: 0.25, "the living room plays another part")
    }
}
