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
}
