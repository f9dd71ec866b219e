import CastKit
import CastProtocol
import CastTestSupport
import Foundation
import XCTest

/// AudioPlayer playing locally, checked by what reached ALSA (the `castcapture` file PCM).
final class AudioPlayerTests: LocalPlaybackTestCase {
    /// A player of a copy of `file` named `name` in the folder, told to play once the copy is removed (opened, then
    /// unreadable: a decode error); `delegate` is told what happens, and the caller keeps both alive.
    private func playRemovedCopy(of file: URL, named name: String, telling delegate: any AudioPlayerDelegate) throws
        -> AudioPlayer
    {
        let doomed = folder.appendingPathComponent(name)
        try FileManager.default.copyItem(at: file, to: doomed)
        let player = try AudioPlayer(contentsOf: doomed, outputs: MovieFixtures.outputs())
        player.delegate = delegate
        try FileManager.default.removeItem(at: doomed)
        player.play()
        return player
    }

    func testDefaultsAndAFileThatCannotBeOpened() throws {
        let tone = try AudioFixtures.tone("a.m4a", seconds: 1, in: folder)
        let player = try AudioPlayer(contentsOf: tone, outputs: MovieFixtures.outputs())
        XCTAssertEqual(player.url, tone)
        XCTAssertEqual(player.duration, 1, accuracy: 0.05)
        XCTAssertEqual(player.numberOfLoops, 0)
        XCTAssertEqual(player.volume, 1)
        XCTAssertFalse(player.enableRate)
        XCTAssertEqual(player.rate, 1)
        XCTAssertFalse(player.isPlaying)
        XCTAssertEqual(player.currentTime, 0)
        XCTAssertTrue(player.allowsAirPlay)
        XCTAssertNil(player.delegate)
        XCTAssertNil(player.activeRoute)
        player.rate = 2
        XCTAssertEqual(player.rate, 1, "rate needs enableRate")

        let text = folder.appendingPathComponent("notes.m4a")
        try Data("not audio".utf8).write(to: text)
        XCTAssertThrowsError(try AudioPlayer(contentsOf: text)) { error in
            XCTAssertEqual((error as? CastError)?.kind, .playback, "\(error)")
        }
        let video = try MovieFixtures.clip(seconds: 1, in: folder)
        XCTAssertNoThrow(try AudioPlayer(contentsOf: video), "a movie's sound plays")
    }

    /// Plays to the end once, then (numberOfLoops 1) twice: the capture holds one and two clips' worth of audio, and the
    /// delegate hears one successful finish each time.
    func testPlaysToTheEndAndLoops() throws {
        let tone = try AudioFixtures.tone("a.m4a", seconds: 1, in: folder)
        let once = folder.appendingPathComponent("once.raw")
        let player = try AudioPlayer(contentsOf: tone, outputs: AudioFixtures.capture(once))
        let log = DelegateLog()
        player.delegate = log
        XCTAssertTrue(player.prepareToPlay())
        XCTAssertFalse(player.isPlaying)
        XCTAssertTrue(player.play())
        XCTAssertTrue(waitUntil(timeout: 2) { player.isPlaying })
        XCTAssertTrue(waitUntil(timeout: 10) { log.calls == ["finish true"] }, "\(log.calls)")
        XCTAssertEqual(AudioFixtures.capturedSeconds(once), 1, accuracy: 0.1)

        let twice = folder.appendingPathComponent("twice.raw")
        let looping = try AudioPlayer(contentsOf: tone, outputs: AudioFixtures.capture(twice))
        let loopLog = DelegateLog()
        looping.delegate = loopLog
        looping.numberOfLoops = 1
        XCTAssertEqual(looping.numberOfLoops, 1)
        let started = Date()
        looping.play()
        XCTAssertTrue(waitUntil(timeout: 10) { loopLog.calls == ["finish true"] }, "\(loopLog.calls)")
        // Two passes of a 1 s tone, paced by the engine's clock; each pass reopens the device, which the file PCM
        // starts afresh, so the capture holds what the second pass played.
        XCTAssertGreaterThan(Date().timeIntervalSince(started), 1.8, "played twice")
        XCTAssertEqual(AudioFixtures.capturedSeconds(twice), 1, accuracy: 0.1)
        XCTAssertFalse(looping.isPlaying)
    }

    /// Volume scales the samples that reach ALSA; stop keeps the position; a file gone by play time is a decode error.
    func testVolumeStopAndDecodeError() throws {
        let tone = try AudioFixtures.tone("a.m4a", seconds: 2, in: folder)
        let loud = folder.appendingPathComponent("loud.raw")
        let quiet = folder.appendingPathComponent("quiet.raw")
        for (file, volume) in [(loud, Float(1)), (quiet, Float(0.25))] {
            let player = try AudioPlayer(contentsOf: tone, outputs: AudioFixtures.capture(file))
            player.volume = volume
            XCTAssertEqual(player.volume, volume)
            let log = DelegateLog()
            player.delegate = log
            player.play()
            XCTAssertTrue(waitUntil(timeout: 10) { log.calls == ["finish true"] }, "\(log.calls)")
        }
        XCTAssertEqual(AudioFixtures.peak(quiet) / AudioFixtures.peak(loud), 0.25, accuracy: 0.02)

        let player = try AudioPlayer(contentsOf: tone, outputs: MovieFixtures.outputs())
        let log = DelegateLog()
        player.delegate = log
        player.play()
        XCTAssertTrue(waitUntil(timeout: 5) { player.currentTime > 0.5 })
        player.stop()
        XCTAssertFalse(player.isPlaying)
        let kept = player.currentTime
        XCTAssertGreaterThan(kept, 0.4, "stop keeps the position")
        player.play()
        XCTAssertTrue(waitUntil(timeout: 5) { player.isPlaying })
        XCTAssertGreaterThanOrEqual(player.currentTime, kept - 0.1)
        player.stop()
        XCTAssertEqual(log.calls, [], "stop is not a finish")

        let brokenLog = DelegateLog()
        let broken = try playRemovedCopy(of: tone, named: "doomed.m4a", telling: brokenLog)
        withExtendedLifetime(broken) {
            XCTAssertTrue(waitUntil(timeout: 5) { brokenLog.calls.count == 2 }, "\(brokenLog.calls)")
        }
        XCTAssertEqual(brokenLog.calls, ["decodeError", "finish false"])
    }

    /// A delegate copied from iOS code, with the seeds' spellings (`error: Error?`, `withOptions: Int`, or the end of
    /// an interruption without options), is called, once per event.
    func testTheSeedsDelegateSpellingsAreCalled() throws {
        let tone = try AudioFixtures.tone("seed.m4a", seconds: 5, in: folder)
        let brokenLog = SeedSpellingDelegateLog()
        let broken = try playRemovedCopy(of: tone, named: "doomed-seed.m4a", telling: brokenLog)
        withExtendedLifetime(broken) {
            XCTAssertTrue(waitUntil(timeout: 5) { brokenLog.calls.count == 2 }, "\(brokenLog.calls)")
        }
        XCTAssertEqual(brokenLog.calls, ["decodeError true", "finish false"])

        // Interrupted by another player starting, released when it stops: once with each spelling of the end.
        let seedLog = SeedSpellingDelegateLog()
        let oldestLog = OldestSpellingDelegateLog()
        for delegate in [seedLog, oldestLog] as [any AudioPlayerDelegate] {
            let player = try AudioPlayer(contentsOf: tone, outputs: MovieFixtures.outputs())
            player.delegate = delegate
            player.play()
            XCTAssertTrue(waitUntil(timeout: 5) { player.isPlaying })
            let other = try AudioPlayer(contentsOf: tone, outputs: MovieFixtures.outputs())
            other.play()
            XCTAssertTrue(waitUntil(timeout: 5) { !player.isPlaying && other.isPlaying })
            other.stop()
            Thread.sleep(forTimeInterval: 0.5)
            player.stop()
        }
        XCTAssertEqual(seedLog.calls, ["begin", "end withOptions 1"])
        XCTAssertEqual(oldestLog.calls, ["begin", "end"])
    }

    /// Another CastKit player starting to play interrupts an audio player (paused, begin), and its stopping ends the
    /// interruption (end with shouldResume); the audio player resumes only when told.
    func testAnotherPlayerInterruptsAndReleases() throws {
        let tone = try AudioFixtures.tone("a.m4a", seconds: 5, in: folder)
        let player = try AudioPlayer(contentsOf: tone, outputs: MovieFixtures.outputs())
        let log = DelegateLog()
        player.delegate = log
        player.play()
        XCTAssertTrue(waitUntil(timeout: 5) { player.isPlaying })

        let other = try AudioPlayer(contentsOf: tone, outputs: MovieFixtures.outputs())
        other.play()
        XCTAssertTrue(waitUntil(timeout: 5) { log.calls == ["begin"] }, "\(log.calls)")
        XCTAssertFalse(player.isPlaying)
        let pausedAt = player.currentTime
        other.stop()
        XCTAssertTrue(waitUntil(timeout: 5) { log.calls == ["begin", "end shouldResume"] }, "\(log.calls)")
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertFalse(player.isPlaying, "it resumes only when told")
        XCTAssertEqual(player.currentTime, pausedAt, accuracy: 0.05)
        player.play()
        XCTAssertTrue(waitUntil(timeout: 5) { player.isPlaying })
        player.stop()

        // A movie player interrupts it too.
        player.play()
        XCTAssertTrue(waitUntil(timeout: 5) { player.isPlaying })
        let movie = MoviePlayerController(
            contentURL: try MovieFixtures.clip(seconds: 1, in: folder), outputs: MovieFixtures.outputs())
        movie.play()
        XCTAssertTrue(waitUntil(timeout: 5) { log.calls.count == 3 }, "\(log.calls)")
        XCTAssertEqual(log.calls.last, "begin")
        // The movie ends by itself: the interruption ends with it.
        XCTAssertTrue(waitUntil(timeout: 5) { log.calls.count == 4 }, "\(log.calls)")
        XCTAssertEqual(log.calls.last, "end shouldResume")
    }

    /// An audio player that loops keeps the audio between its loops: the player it interrupted hears the end of the
    /// interruption once, after the last loop, not at each loop's end.
    func testAPlayerInterruptedByALoopingOneIsReleasedAfterItsLastLoop() throws {
        let tone = try AudioFixtures.tone("long.m4a", seconds: 8, in: folder)
        let player = try AudioPlayer(contentsOf: tone, outputs: MovieFixtures.outputs())
        let log = DelegateLog()
        player.delegate = log
        player.play()
        XCTAssertTrue(waitUntil(timeout: 5) { player.isPlaying })
        let short = try AudioFixtures.tone("short.m4a", seconds: 1, in: folder)
        let looping = try AudioPlayer(contentsOf: short, outputs: MovieFixtures.outputs())
        let loopLog = DelegateLog()
        looping.delegate = loopLog
        looping.numberOfLoops = 2
        let started = Date()
        looping.play()
        XCTAssertTrue(waitUntil(timeout: 15) { log.calls.count == 2 }, "\(log.calls)")
        let released = Date().timeIntervalSince(started)
        print("the interruption ended \(String(format: "%.2f", released)) s after the 3 × 1 s loops began")
        XCTAssertEqual(log.calls, ["begin", "end shouldResume"], "one interruption for the three rounds")
        // Three rounds of a second each: a release at the end of the first round came after about 1 s.
        XCTAssertGreaterThan(released, 2.5, "released between loops")
        XCTAssertTrue(waitUntil(timeout: 5) { loopLog.calls == ["finish true"] }, "\(loopLog.calls)")
        player.stop()
    }
}
