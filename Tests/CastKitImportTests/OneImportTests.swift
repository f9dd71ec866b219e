import CastKit
import Foundation
import XCTest

/// A program that imports CastKit and nothing else can name every type the players' API uses (this target depends on
/// CastKit alone and imports nothing else of the package: the file would not compile otherwise).
final class OneImportTests: XCTestCase {
    func testThePlayersTypesAreNamedThroughCastKit() {
        let player = MoviePlayerController(contentURL: nil)
        let state: PlaybackState = player.playbackState
        let load: LoadState = player.loadState
        let scaling: ScalingMode = player.scalingMode
        let option: ThumbnailTimeOption = .exact
        let reason: FinishReason = .playbackEnded
        let metadata: TimedMetadata? = player.timedMetadata
        let access: [AccessLogEntry] = player.accessLog
        let errors: [ErrorLogEntry] = player.errorLog
        let thumbnail: Thumbnail? = nil
        XCTAssertEqual(state, .stopped)
        XCTAssertEqual(load, [])
        XCTAssertEqual(scaling, .aspectFit)
        XCTAssertEqual(option, .exact)
        XCTAssertEqual(reason, .playbackEnded)
        XCTAssertNil(metadata)
        XCTAssertTrue(access.isEmpty && errors.isEmpty)
        XCTAssertNil(thumbnail)
    }

    /// The receivers, pairing and errors are CastKit's names too (typealiases of CastSender's types): a program picks
    /// a receiver, pairs and reads errors with `import CastKit` alone. That CastSender's machinery is not visible
    /// (`SenderConnectionStateMachine`, `ReceiverConnection`, ...) cannot be tried here, since a name that does not
    /// compile fails the build: `scripts/check-castkit-api` checks it and ProductTests runs the script.
    func testTheReceiversPairingAndErrorsAreNamedThroughCastKit() {
        let receiver = ReceiverDescription(name: "Kitchen", id: "ab12", host: "192.0.2.7", port: 7100)
        XCTAssertEqual(receiver.address, "192.0.2.7:7100")
        let error = CastError(.notAuthorised, "pairing needed")
        XCTAssertEqual(error.kind, .notAuthorised)
        let change: ReceiverBrowserEvent = .appeared(receiver)
        XCTAssertEqual(change, .appeared(receiver))
        XCTAssertTrue(Pairing.pairedIDs(configDirectory: "/nonexistent-cast-config").isEmpty)
        let resolve: (String?) throws -> ReceiverDescription = { try ReceiverBrowser.resolve($0) }
        _ = resolve
    }
}
