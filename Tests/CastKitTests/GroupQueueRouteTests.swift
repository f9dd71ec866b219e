import CastBase
import CastKit
import CastProtocol
import CastTestSupport
import Foundation
import XCTest

/// A CastKit music queue on a group keeps one group across its items (issue 31), as `cast queue` with several `--to`
/// does: real castd on loopback writing into FIFOs this test reads (as GroupRouteTests).
final class GroupQueueRouteTests: CapturingReceiversTestCase {
    /// Two items on two receivers: both play both, the second begun in step, over one connection from this sender to
    /// each castd for the whole queue. Before, each item started a group of its own (a connection and a clock
    /// measurement per item and member).
    func testAMusicQueueOnAGroupKeepsOneGroupAcrossItsItems() throws {
        let (kitchen, kitchenSound) = try startReceiver("Kitchen")
        let (livingRoom, livingRoomSound) = try startReceiver("Living Room")
        let length = 4
        let first = try GroupFixtures.beeps(seconds: length, in: folder)
        let second = folder.appendingPathComponent("beeps-2.flac")
        try FileManager.default.copyItem(at: first, to: second)
        let player = MusicPlayerController(
            outputs: MovieFixtures.outputs(),
            configuration: CastKitConfiguration(
                configDirectory: folder.appendingPathComponent("sender").path, senderName: "castkit-tests"))
        player.setQueue(with: [try MediaItem(url: first), try MediaItem(url: second)])
        CastRoute.selection = [kitchen, livingRoom]
        player.play()
        XCTAssertTrue(
            waitUntil(timeout: 20) { Double(kitchenSound.total) >= GroupFixtures.rate * 0.5 }, "the kitchen plays")
        XCTAssertTrue(
            waitUntil(timeout: Double(2 * length) + 20) {
                player.playbackState == .stopped && Double(livingRoomSound.total) > GroupFixtures.rate * 7
            }, "\(player.playbackState)")
        for capture in captures { capture.stop(atLeast: Int(GroupFixtures.rate) * 2 * length) }

        for (receiver, sound) in zip(receivers, [kitchenSound, livingRoomSound]) {
            let connections = receiver.output.filter { $0.contains("connected from") }.count
            print("castkit group queue: \(receiver.output.first { $0.contains("listening") } ?? "") saw \(connections)")
            XCTAssertEqual(connections, 1, "\(receiver.output.suffix(12))")
            XCTAssertEqual(Double(sound.total) / GroupFixtures.rate, Double(2 * length), accuracy: 0.2, "both items")
        }
        // The second item: the last stretch each wrote, begun at one instant.
        let apart = try GroupFixtures.spread([kitchenSound, livingRoomSound], between: 0, and: .max)
        print(String(format: "castkit group queue: the second item's members within %.3f ms", apart * 1000))
        XCTAssertLessThan(apart, 0.002)
    }
}
