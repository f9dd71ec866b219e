import CastKit
import CastProtocol
import CastSender
import CastTestSupport
import Foundation
import XCTest

/// CastKit's routes pin like `cast` does (issue #13): paired with "Living Room" on loopback, the library refuses an
/// impostor (another key, `--auth none`) at its address, under "Living Room " or picked as "Living Room 2" for what
/// the user asked to be "Living Room". Nothing is sent to it: no file, no URL with credentials.
final class RoutePinningTests: LoopbackReceiversTestCase {
    private var configuration: CastKitConfiguration {
        CastKitConfiguration(configDirectory: folder.appendingPathComponent("sender").path, senderName: "castkit-tests")
    }

    private func start(_ name: String, state: String, auth: String = "none", port: UInt16 = 0) throws
        -> LoopbackReceiver
    {
        let receiver = try LoopbackReceiver(
            stateDirectory: folder.appendingPathComponent(state).path,
            videoOut: "framemd5:" + folder.appendingPathComponent("\(state).md5").path, port: port, name: name,
            auth: auth)
        receivers.append(receiver)
        return receiver
    }

    /// Pairs with `receiver`, answering with the PIN it prints for the attempt.
    private func pair(with receiver: LoopbackReceiver) throws {
        let paired = try Pairing.pair(
            receiver.description, configDirectory: configuration.configDirectory, senderName: "castkit-tests"
        ) {
            var line: String?
            waitUntil(timeout: 10) {
                line = receiver.output.first { $0.hasPrefix("Pairing PIN: ") }
                return line != nil
            }
            return line.map { String($0.dropFirst("Pairing PIN: ".count)) }
        }
        XCTAssertEqual(paired.name, "Living Room")
    }

    /// Every way CastKit could reach `impostor` as `route` is refused, and it neither plays nor hears a hello.
    private func assertRefused(_ route: ReceiverDescription, impostor: LoopbackReceiver, clip: URL) {
        XCTAssertThrowsError(
            try RemotePlayback.start(
                MediaFile.open(clip.path), on: route, configDirectory: configuration.configDirectory,
                senderName: configuration.senderName)
        ) { error in
            XCTAssertEqual((error as? CastError)?.kind, .notAuthorised, "\(error)")
            XCTAssertTrue("\(error)".contains("has changed"), "\(error)")
        }
        XCTAssertThrowsError(
            try RemotePlayback.start(
                url: "http://alice:secret@127.0.0.1:9/movie.mp4", on: route,
                configDirectory: configuration.configDirectory, senderName: configuration.senderName)
        ) { error in
            XCTAssertEqual((error as? CastError)?.kind, .notAuthorised, "\(error)")
        }

        // A movie player on that route plays here instead.
        let player = MoviePlayerController(
            contentURL: clip, outputs: MovieFixtures.outputs(),
            configuration: configuration)
        CastRoute.selected = route
        player.play()
        XCTAssertTrue(waitUntil(timeout: 10) { player.activeRoute == nil && player.playbackState == .playing })
        XCTAssertFalse(player.isAirPlayVideoActive)
        player.stop()
        CastRoute.selected = nil

        Thread.sleep(forTimeInterval: 0.3)
        let output = impostor.output
        XCTAssertFalse(output.contains { $0.contains(" plays ") || $0.contains("connected from") }, "\(output)")
        XCTAssertFalse(output.contains { $0.contains("secret") }, "\(output)")
    }

    func testRoutesToAnImpostorOfAPairedReceiverAreRefused() throws {
        let clip = try MovieFixtures.clip(seconds: 3, in: folder)
        let real = try start("Living Room", state: "real", auth: "pin")
        try pair(with: real)
        let port = real.port
        real.kill()

        // At the paired receiver's address, under another name.
        let atAddress = try start("Den", state: "den", port: port)
        assertRefused(atAddress.description, impostor: atAddress, clip: clip)
        atAddress.kill()

        // Elsewhere, under the paired name with a trailing space.
        let spaced = try start("Living Room ", state: "spaced")
        assertRefused(spaced.description, impostor: spaced, clip: clip)

        // Elsewhere, as "Living Room 2", picked for what the user asked to be "Living Room".
        let second = try start("Living Room 2", state: "second")
        var picked = second.description
        picked.requested = "Living Room"
        assertRefused(picked, impostor: second, clip: clip)
        // Chosen by its own name, it is another receiver: no pairing applies and it plays.
        let own = try RemotePlayback.start(
            MediaFile.open(clip.path), on: second.description, configDirectory: configuration.configDirectory,
            senderName: configuration.senderName)
        own.close()
    }
}
