import CastProtocol
import XCTest

/// The one reducer of playback events: each event's fact, what it changed, and the position it implies.
final class PlaybackSnapshotTests: XCTestCase {
    func testEachEventSetsItsFactAndSaysWhatChanged() {
        var snapshot = PlaybackSnapshot()
        XCTAssertEqual(snapshot.apply(.loadState([.playable])), .loadState)
        XCTAssertEqual(snapshot.apply(.durationAvailable(20)), .duration)
        XCTAssertEqual(snapshot.apply(.mediaTypes([.audio, .video])), .mediaTypes)
        XCTAssertEqual(snapshot.apply(.naturalSize(width: 1920, height: 1080)), .naturalSize)
        XCTAssertEqual(snapshot.apply(.readyForDisplay), .readyForDisplay)
        XCTAssertEqual(snapshot.apply(.playbackState(.playing)), .state)
        XCTAssertEqual(snapshot.apply(.position(seconds: 1.5, at: 100)), .position)
        XCTAssertEqual(snapshot.apply(.videoActive(true)), .videoActive)
        XCTAssertEqual(snapshot.apply(.volume(0.5, muted: true)), .volume)
        XCTAssertEqual(snapshot.apply(.rate(2)), .rate)
        XCTAssertEqual(snapshot.apply(.buffered(playableDuration: 9, ahead: 7.5)), .buffered)
        let tags = TimedMetadata(items: ["title": "Song"], artwork: false)
        XCTAssertEqual(snapshot.apply(.metadata(tags)), .metadata)
        let track = MediaTrack(index: 1, kind: .audio, language: "eng", title: nil, codec: "aac", selected: true)
        XCTAssertEqual(snapshot.apply(.tracks([track])), .tracks)

        XCTAssertEqual(snapshot.loadState, [.playable])
        XCTAssertEqual(snapshot.duration, 20)
        XCTAssertEqual(snapshot.mediaTypes, [.audio, .video])
        XCTAssertEqual(snapshot.naturalSize?.width, 1920)
        XCTAssertEqual(snapshot.naturalSize?.height, 1080)
        XCTAssertTrue(snapshot.readyForDisplay)
        XCTAssertEqual(snapshot.state, .playing)
        XCTAssertEqual(snapshot.position, .init(seconds: 1.5, at: 100))
        XCTAssertTrue(snapshot.videoActive)
        XCTAssertEqual(snapshot.volume?.level, 0.5)
        XCTAssertEqual(snapshot.volume?.muted, true)
        XCTAssertEqual(snapshot.rate, 2)
        XCTAssertEqual(snapshot.playableDuration, 9)
        XCTAssertEqual(snapshot.bufferedAhead, 7.5)
        XCTAssertEqual(snapshot.metadata, tags)
        XCTAssertEqual(snapshot.tracks, [track])
        XCTAssertNil(snapshot.finish)
    }

    func testARepeatedFactChangesNothingAndLogsAreNotState() {
        var snapshot = PlaybackSnapshot()
        snapshot.apply(.playbackState(.paused))
        snapshot.apply(.naturalSize(width: 640, height: 360))
        let before = snapshot
        XCTAssertEqual(snapshot.apply(.playbackState(.paused)), [])
        XCTAssertEqual(snapshot.apply(.naturalSize(width: 640, height: 360)), [])
        XCTAssertEqual(snapshot.apply(.accessLog(AccessLogEntry(playbackStartDate: 1))), [])
        XCTAssertEqual(snapshot.apply(.errorLog(ErrorLogEntry(date: 1, domain: "decoder", comment: "x"))), [])
        XCTAssertEqual(snapshot, before)
        // A stream that switches resolution changes the size again.
        XCTAssertEqual(snapshot.apply(.naturalSize(width: 1280, height: 720)), .naturalSize)
        // Only the part of `buffered` that moved counts once.
        snapshot.apply(.buffered(playableDuration: 5, ahead: 2))
        XCTAssertEqual(snapshot.apply(.buffered(playableDuration: 5, ahead: 1)), .buffered)
    }

    func testAFinishStopsAndKeepsItsReasonAndCode() {
        var snapshot = PlaybackSnapshot()
        snapshot.apply(.playbackState(.playing))
        let changes = snapshot.apply(.finished(reason: .playbackError, error: "bad file", code: .receiverShutdown))
        XCTAssertEqual(changes, [.state, .finish])
        XCTAssertEqual(snapshot.state, .stopped)
        XCTAssertEqual(snapshot.finish, .init(reason: .playbackError, error: "bad file", code: .receiverShutdown))
    }

    /// The position moves on at the rate only while playing, never past the duration, never back with the clock.
    func testThePositionMovesOnlyWhilePlaying() {
        var snapshot = PlaybackSnapshot()
        XCTAssertNil(snapshot.position(now: 100))
        snapshot.apply(.durationAvailable(10))
        snapshot.apply(.position(seconds: 4, at: 100))
        snapshot.apply(.playbackState(.paused))
        XCTAssertEqual(snapshot.position(now: 103), 4)
        snapshot.apply(.playbackState(.playing))
        XCTAssertEqual(snapshot.position(now: 103), 7)
        snapshot.apply(.rate(2))
        XCTAssertEqual(snapshot.position(now: 102), 8)
        XCTAssertEqual(snapshot.position(now: 200), 10, "not past the duration")
        XCTAssertEqual(snapshot.position(now: 90), 4, "a wall clock that stepped back does not move it back")
        snapshot.apply(.playbackState(.interrupted))
        XCTAssertEqual(snapshot.position(now: 103), 4)
    }
}
