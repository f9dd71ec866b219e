import CastBase
import CastKit
import CastProtocol
import CastTestSupport
import Foundation
import XCTest

/// A CastKit group playing an http(s) URL (issue 31): each member opens the URL itself, as a single receiver does, and
/// the sender serves nothing; the members start in step by the group's schedule. Real castd on loopback writing into
/// FIFOs this test reads (as GroupRouteTests), the test media server (Tests/Fixtures/media_server.py) on loopback.
final class GroupURLTests: CapturingReceiversTestCase {
    /// A movie player whose content is an http URL, routed to two receivers: both open the URL, play the whole of it
    /// in step (each beep written within 2 ms on both, as GroupRouteTests asks of a file) and the player finishes with
    /// `playbackEnded`. Before, a group route opened its content as a local file and lost the route.
    func testAGroupPlaysAnHTTPURLEachMemberPullsItselfInStep() throws {
        let (kitchen, kitchenSound) = try startReceiver("Kitchen")
        let (livingRoom, livingRoomSound) = try startReceiver("Living Room")
        let length = 8
        let clip = try GroupFixtures.beeps(seconds: length, in: folder)
        let server = try MediaServer(folder: folder)
        defer { server.stop() }
        let url = try XCTUnwrap(URL(string: "http://127.0.0.1:\(server.port)/\(clip.lastPathComponent)"))
        let player = MoviePlayerController(
            contentURL: url, outputs: MovieFixtures.outputs(),
            configuration: CastKitConfiguration(
                configDirectory: folder.appendingPathComponent("sender").path, senderName: "castkit-tests"))
        let log = MoviePlayerLog(player)
        CastRoute.selection = [kitchen, livingRoom]
        let asked = MonotonicClock.nanoseconds()
        player.play()
        XCTAssertTrue(
            waitUntil(timeout: Double(length) + 20) { log.finishReason != nil }, "\(log.names) \(player.errorLog)")
        XCTAssertEqual(log.finishReason, .playbackEnded, "\(player.errorLog)")
        for capture in captures { capture.stop(atLeast: Int(GroupFixtures.rate) * length) }

        // Each castd opened the URL itself (its log names what it plays).
        for receiver in receivers {
            XCTAssertTrue(
                receiver.output.contains { $0.contains("plays \"\(url.absoluteString)\"") },
                "\(receiver.output.suffix(10))")
        }
        for sound in [kitchenSound, livingRoomSound] {
            XCTAssertEqual(Double(sound.total) / GroupFixtures.rate, Double(length), accuracy: 0.2, "played whole")
        }
        let first = try XCTUnwrap(kitchenSound.reads.first).arrival
        let apart = try GroupFixtures.spread([kitchenSound, livingRoomSound], between: 0, and: .max)
        print(
            String(
                format: "castkit URL group: play() → the first samples in %.0f ms; the members within %.3f ms",
                Double(first - asked) / 1e6, apart * 1000))
        XCTAssertLessThan(apart, 0.002)
    }
}
