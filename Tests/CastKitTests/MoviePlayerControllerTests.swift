import CastKit
import CastProtocol
import CastTestSupport
import Foundation
import Synchronization
import XCTest

/// The movie player playing locally: the engine with audio to ALSA's `null` and no video.
final class MoviePlayerControllerTests: LocalPlaybackTestCase {
    func testDefaults() {
        let player = MoviePlayerController(contentURL: nil, outputs: MovieFixtures.outputs())
        XCTAssertNil(player.contentURL)
        XCTAssertEqual(player.playbackState, .stopped)
        XCTAssertEqual(player.loadState, [])
        XCTAssertEqual(player.duration, 0)
        XCTAssertEqual(player.naturalSize, .zero)
        XCTAssertEqual(player.movieMediaTypes, [])
        XCTAssertEqual(player.initialPlaybackTime, -1)
        XCTAssertEqual(player.endPlaybackTime, -1)
        XCTAssertTrue(player.shouldAutoplay)
        XCTAssertFalse(player.readyForDisplay)
        XCTAssertTrue(player.allowsAirPlay)
        XCTAssertFalse(player.isAirPlayVideoActive)
        XCTAssertFalse(player.isPreparedToPlay)
        XCTAssertEqual(player.currentPlaybackTime, 0)
        XCTAssertEqual(player.currentPlaybackRate, 0)
        XCTAssertEqual(MoviePlayerController.Outputs().audioDevice, "default")
        XCTAssertTrue(CastKitConfiguration().configDirectory.hasSuffix("/cast"))
        player.play()  // no movie: nothing happens
        XCTAssertEqual(player.playbackState, .stopped)
    }

    /// A 2 s movie plays to its end in about 2 s, and announces itself in the seeds' order, on NotificationCenter and
    /// on the stream alike.
    func testPlaysToTheEndWithNotificationsInOrder() throws {
        let clip = try MovieFixtures.clip(seconds: 2, in: folder)
        let player = MoviePlayerController(contentURL: clip, outputs: MovieFixtures.outputs())
        let log = MoviePlayerLog(player)
        let started = Date()
        player.play()
        XCTAssertTrue(waitUntil(timeout: 15) { log.finishReason != nil }, "no finish: \(log.names)")
        let seconds = Date().timeIntervalSince(started)
        XCTAssertEqual(log.finishReason, .playbackEnded)
        XCTAssertGreaterThan(seconds, 1.8)
        XCTAssertLessThan(seconds, 4)

        let names = log.names
        let milestones: [Notification.Name] = [
            .moviePlayerLoadStateDidChange, .movieDurationAvailable, .movieMediaTypesAvailable,
            .movieNaturalSizeAvailable, .moviePlayerReadyForDisplayDidChange, .moviePlayerPlaybackStateDidChange,
            .moviePlayerPlaybackDidFinish,
        ]
        let indices = milestones.map { names.firstIndex(of: $0) ?? -1 }
        XCTAssertFalse(indices.contains(-1), "\(names.map(\.rawValue))")
        XCTAssertEqual(indices, indices.sorted(), "\(names.map(\.rawValue))")
        XCTAssertEqual(names.last, .moviePlayerPlaybackDidFinish)
        XCTAssertEqual(log.count(.moviePlayerTimedMetadataUpdated), 1, "the container's tags, once")
        XCTAssertEqual(log.count(.movieDurationAvailable), 1)
        XCTAssertEqual(log.count(.moviePlayerIsAirPlayVideoActiveDidChange), 0, "local playback is not AirPlay")

        // The stream carries the same events, with their values.
        XCTAssertTrue(waitUntil(timeout: 2) { log.streamed.count == names.count })
        XCTAssertEqual(log.streamed.map(\.notificationName), names)
        XCTAssertEqual(log.states, [.playing, .stopped])
        let loads = log.streamed.compactMap { if case .loadStateDidChange(let s) = $0 { s } else { nil } }
        XCTAssertEqual(loads, [[.playable], [.playable, .playthroughOK]])
        if case .playbackDidFinish(let reason, let error) = log.streamed.last {
            XCTAssertEqual(reason, .playbackEnded)
            XCTAssertNil(error)
        } else {
            XCTFail("the stream does not end with the finish")
        }

        XCTAssertEqual(player.duration, 2, accuracy: 0.1)
        XCTAssertEqual(player.naturalSize, CGSize(width: 320, height: 240))
        XCTAssertEqual(player.movieMediaTypes, [.audio, .video])
        XCTAssertTrue(player.readyForDisplay)
        XCTAssertEqual(player.playbackState, .stopped)
        XCTAssertFalse(player.isPreparedToPlay)
        XCTAssertEqual(player.currentPlaybackTime, 2, accuracy: 0.15)
    }

    /// Pause stops the position, an exact seek moves it while paused, play continues from there; stop finishes with
    /// `userExited`.
    func testPauseSeekPlayAndStop() throws {
        let clip = try MovieFixtures.clip(seconds: 6, in: folder)
        let player = MoviePlayerController(contentURL: clip, outputs: MovieFixtures.outputs())
        let log = MoviePlayerLog(player)
        player.play()
        XCTAssertTrue(waitUntil(timeout: 10) { player.currentPlaybackTime >= 1 }, "\(log.names)")
        XCTAssertEqual(player.playbackState, .playing)
        XCTAssertEqual(player.currentPlaybackRate, 1)

        player.pause()
        XCTAssertTrue(waitUntil(timeout: 2) { log.states.last == .paused }, "\(log.states)")
        XCTAssertEqual(player.currentPlaybackRate, 0)
        let pausedAt = player.currentPlaybackTime
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(player.currentPlaybackTime, pausedAt, accuracy: 0.05, "the position runs while paused")

        player.currentPlaybackTime = 4
        XCTAssertEqual(player.currentPlaybackTime, 4, accuracy: 0.01)
        XCTAssertTrue(
            waitUntil(timeout: 3) { log.states.suffix(2) == [.seekingForward, .paused] }, "\(log.states)")
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertEqual(player.currentPlaybackTime, 4, accuracy: 0.05)
        XCTAssertEqual(player.playbackState, .paused)

        player.play()
        XCTAssertTrue(waitUntil(timeout: 2) { log.states.last == .playing }, "\(log.states)")
        Thread.sleep(forTimeInterval: 0.8)
        XCTAssertEqual(player.currentPlaybackTime, 4.8, accuracy: 0.3)

        player.stop()
        XCTAssertEqual(player.playbackState, .stopped)
        XCTAssertTrue(waitUntil(timeout: 2) { log.finishReason != nil })
        XCTAssertEqual(log.finishReason, .userExited)
        XCTAssertEqual(player.currentPlaybackTime, 0)
        XCTAssertEqual(log.states, [.playing, .paused, .seekingForward, .paused, .playing, .stopped])
    }

    /// With `shouldAutoplay` false, `prepareToPlay` loads and waits paused at `initialPlaybackTime`.
    func testPrepareWithoutAutoplayWaitsPaused() throws {
        let clip = try MovieFixtures.clip(seconds: 2, in: folder)
        let player = MoviePlayerController(contentURL: clip, outputs: MovieFixtures.outputs())
        let log = MoviePlayerLog(player)
        player.shouldAutoplay = false
        player.initialPlaybackTime = 1
        player.prepareToPlay()
        XCTAssertTrue(waitUntil(timeout: 5) { player.isPreparedToPlay }, "ready once it can play")
        XCTAssertTrue(waitUntil(timeout: 5) { player.readyForDisplay && player.duration > 0 })
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(player.playbackState, .paused)
        XCTAssertEqual(player.currentPlaybackTime, 1, accuracy: 0.05)
        XCTAssertFalse(log.states.contains(.playing), "\(log.states)")
        player.play()
        XCTAssertTrue(waitUntil(timeout: 5) { log.finishReason != nil })
        XCTAssertEqual(log.finishReason, .playbackEnded)
        XCTAssertEqual(log.states, [.paused, .playing, .stopped])
    }

    /// NaN, the iOS SDK's default `initialPlaybackTime`, is the movie's start (a port that copies it must not load at
    /// NaN), here and when `contentURL` changes.
    func testANaNInitialPlaybackTimeIsTheStart() throws {
        let clip = try MovieFixtures.clip(seconds: 2, in: folder)
        let md5 = folder.appendingPathComponent("nan.md5").path
        let player = MoviePlayerController(
            contentURL: clip, outputs: MovieFixtures.outputs(video: .framemd5(path: md5)))
        let log = MoviePlayerLog(player)
        player.initialPlaybackTime = .nan
        player.shouldAutoplay = false
        player.prepareToPlay()
        XCTAssertTrue(waitUntil(timeout: 5) { player.readyForDisplay }, "\(log.names)")
        XCTAssertEqual(player.currentPlaybackTime, 0, accuracy: 0.05)
        // readyForDisplay comes as the output holds its first picture; its framemd5 line follows as it is shown.
        XCTAssertTrue(waitUntil(timeout: 5) { !MovieFixtures.frameTimes(md5).isEmpty })
        XCTAssertEqual(MovieFixtures.frameTimes(md5).first, 0)
        player.play()
        XCTAssertTrue(waitUntil(timeout: 10) { log.finishReason != nil })
        XCTAssertEqual(log.finishReason, .playbackEnded)
        XCTAssertEqual(MovieFixtures.frameTimes(md5).count, 50)
    }

    /// Only one movie player plays: a second one starting stops the first, which posts its finish.
    func testSecondPlayerStopsTheFirst() throws {
        let clip = try MovieFixtures.clip(seconds: 6, in: folder)
        let first = MoviePlayerController(contentURL: clip, outputs: MovieFixtures.outputs())
        let second = MoviePlayerController(contentURL: clip, outputs: MovieFixtures.outputs())
        let firstLog = MoviePlayerLog(first)
        let secondLog = MoviePlayerLog(second)
        first.play()
        XCTAssertTrue(waitUntil(timeout: 10) { firstLog.states.last == .playing })
        second.play()
        XCTAssertTrue(waitUntil(timeout: 3) { firstLog.finishReason != nil })
        XCTAssertEqual(firstLog.finishReason, .userExited)
        XCTAssertEqual(first.playbackState, .stopped)
        XCTAssertTrue(waitUntil(timeout: 10) { secondLog.states.last == .playing })
        XCTAssertNil(secondLog.finishReason)
        second.stop()
    }

    /// Setting `contentURL` mid-movie unloads it without a finish and plays the new movie from its start.
    func testSettingContentURLLoadsTheNewMovie() throws {
        let long = try MovieFixtures.clip(seconds: 6, in: folder)
        let short = try MovieFixtures.clip(seconds: 2, in: folder)
        let player = MoviePlayerController(contentURL: long, outputs: MovieFixtures.outputs())
        let log = MoviePlayerLog(player)
        player.play()
        XCTAssertTrue(waitUntil(timeout: 10) { player.currentPlaybackTime >= 1 })
        XCTAssertEqual(player.duration, 6, accuracy: 0.1)
        player.contentURL = short
        XCTAssertEqual(player.contentURL, short)
        XCTAssertEqual(player.duration, 0)
        XCTAssertEqual(player.currentPlaybackTime, 0)
        XCTAssertTrue(waitUntil(timeout: 10) { log.finishReason != nil })
        XCTAssertEqual(log.count(.moviePlayerPlaybackDidFinish), 1)
        XCTAssertEqual(log.finishReason, .playbackEnded)
        XCTAssertEqual(player.duration, 2, accuracy: 0.1)
        XCTAssertEqual(log.count(.movieDurationAvailable), 2)
        XCTAssertEqual(log.states, [.playing, .paused, .playing, .stopped])
    }

    /// A file that does not exist finishes with `playbackError` and the error in userInfo.
    func testMissingFileFinishesWithAnError() throws {
        let player = MoviePlayerController(
            contentURL: folder.appendingPathComponent("missing.mp4"), outputs: MovieFixtures.outputs())
        let log = MoviePlayerLog(player)
        let error = Mutex<CastError?>(nil)
        let token = NotificationCenter.default.addObserver(
            forName: .moviePlayerPlaybackDidFinish, object: player, queue: nil
        ) { note in
            error.withLock { $0 = note.userInfo?[MoviePlayerController.errorUserInfoKey] as? CastError }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        player.play()
        XCTAssertTrue(waitUntil(timeout: 5) { log.finishReason != nil })
        XCTAssertEqual(log.finishReason, .playbackError)
        XCTAssertNotNil(error.withLock { $0 })
        XCTAssertEqual(player.playbackState, .stopped)
    }
}
