import CastKit
import CastTestSupport
import Foundation
import Glibc
import XCTest

/// Code ported from the seeds (Apple's AddMusic and MoviePlayer samples, the MPMoviePlayerController and
/// MPMusicPlayerController documentation) the way an iOS developer ports it: observers added with
/// `NotificationCenter.default.addObserver(forName:object:queue:)`, the state read from the player in the handler,
/// the seeds' method names. Each test is what issue 29 found misbehaving.
final class SeedPortTests: LocalPlaybackTestCase {
    /// `count` tagged tones of `seconds` each, "Song 1"…, in album order, in a folder of their own.
    private func songs(_ count: Int = 3, seconds: Double = 1) throws -> [MediaItem] {
        let album = folder.appendingPathComponent("album")
        try FileManager.default.createDirectory(at: album, withIntermediateDirectories: true)
        for track in 1...count {
            _ = try AudioFixtures.tone(
                "0\(track).m4a", seconds: seconds, frequency: 300 + 100 * track,
                tags: ["title": "Song \(track)", "album": "Port", "track": "\(track)/\(count)"], in: album)
        }
        return MediaQuery(folder: album).items
    }

    /// AddMusic's `handle_PlaybackStateChanged:` calls `stop` when the state reads `.stopped` ("ensures that the
    /// music player will play its queue from the start"), on the main queue. Between songs the player stays
    /// `.playing`, so all three songs play, and `.stopped` is read once, at the end of the queue.
    func testAddMusicObserverHearsStoppedOnlyAtTheEndOfTheQueue() throws {
        let items = try songs()
        let player = MusicPlayerController(outputs: MovieFixtures.outputs())
        let seen = Transcript()
        let center = NotificationCenter.default
        let stateObserver = center.addObserver(
            forName: .musicPlayerControllerPlaybackStateDidChange, object: player, queue: .main
        ) { _ in
            let playbackState = player.playbackState
            seen.add("\(playbackState)")
            if playbackState == .stopped { player.stop() }
        }
        let itemObserver = center.addObserver(
            forName: .musicPlayerControllerNowPlayingItemDidChange, object: player, queue: .main
        ) { _ in
            if let item = player.nowPlayingItem { seen.add(item.title) }
        }
        defer {
            center.removeObserver(stateObserver)
            center.removeObserver(itemObserver)
        }
        player.beginGeneratingPlaybackNotifications()
        player.setQueue(with: items)
        player.play()
        let ended = Self.runMainQueue(timeout: 15) { player.nowPlayingItem == nil && seen.entries.last == "stopped" }
        XCTAssertTrue(ended, "the queue did not end: \(seen.entries)")
        XCTAssertEqual(seen.entries.filter { $0.hasPrefix("Song") }, ["Song 1", "Song 2", "Song 3"], "\(seen.entries)")
        XCTAssertEqual(seen.entries.filter { !$0.hasPrefix("Song") }, ["playing", "stopped"], "\(seen.entries)")
        XCTAssertEqual(player.playbackState, .stopped)
        player.endGeneratingPlaybackNotifications()
    }

    /// The two notifications come in the order the changes happened, from one delivery path: an observer that runs
    /// where it is posted (as NSNotificationCenter's selector observers do) reads the item and the state each
    /// announces. A skip while playing changes the item only; the end of the queue is the item, then `.stopped`.
    func testItemAndStateNotificationsComeInOrder() throws {
        let items = try songs(seconds: 1.5)
        let player = MusicPlayerController(outputs: MovieFixtures.outputs())
        let seen = Transcript()
        let center = NotificationCenter.default
        let stateObserver = center.addObserver(
            forName: .musicPlayerControllerPlaybackStateDidChange, object: player, queue: nil
        ) { _ in seen.add("state \(player.playbackState)") }
        let itemObserver = center.addObserver(
            forName: .musicPlayerControllerNowPlayingItemDidChange, object: player, queue: nil
        ) { _ in seen.add("item \(player.nowPlayingItem?.title ?? "none")") }
        defer {
            center.removeObserver(stateObserver)
            center.removeObserver(itemObserver)
        }
        player.beginGeneratingPlaybackNotifications()
        player.setQueue(with: items)
        player.play()
        XCTAssertTrue(waitUntil(timeout: 5) { player.currentPlaybackTime > 0.3 })
        player.skipToNextItem()
        XCTAssertTrue(waitUntil(timeout: 15) { seen.entries.last == "state stopped" }, "\(seen.entries)")
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertEqual(
            seen.entries,
            ["item Song 1", "state playing", "item Song 2", "item Song 3", "item none", "state stopped"])
        player.endGeneratingPlaybackNotifications()
    }

    /// "A new item starts at its beginning unless a time is set after it": a time set while nothing is loaded
    /// belongs to the item it was set for. The movie player's new `contentURL`, and the music player's next item.
    func testATimeSetBeforeANewItemDoesNotCarryOver() throws {
        let clip = try MovieFixtures.clip(seconds: 4, in: folder)
        let movie = MoviePlayerController(contentURL: nil, outputs: MovieFixtures.outputs())
        movie.currentPlaybackTime = 2.5
        movie.contentURL = clip
        movie.play()
        XCTAssertTrue(waitUntil(timeout: 5) { movie.playbackState == .playing })
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertLessThan(movie.currentPlaybackTime, 1.5, "the new movie started where the time set before it said")
        movie.stop()

        let items = try songs(2, seconds: 4)
        let music = MusicPlayerController(outputs: MovieFixtures.outputs())
        music.setQueue(with: items)
        music.currentPlaybackTime = 2.5
        music.skipToNextItem()
        music.play()
        XCTAssertEqual(music.nowPlayingItem?.title, "Song 2")
        XCTAssertTrue(waitUntil(timeout: 5) { music.playbackState == .playing })
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertLessThan(music.currentPlaybackTime, 1.5, "the next song started where the time set before it said")
        music.stop()
    }

    /// `isPreparedToPlay` is true once the movie can play, not as soon as loading starts: a server that never
    /// answers leaves it false; a file turns it true with its load state, and `stop()` false again.
    func testIsPreparedToPlayWaitsForTheMovie() throws {
        let server = try SilentServer()
        defer { server.close() }
        let player = MoviePlayerController(
            contentURL: URL(string: "http://127.0.0.1:\(server.port)/movie.mp4"), outputs: MovieFixtures.outputs())
        player.shouldAutoplay = false
        player.prepareToPlay()
        Thread.sleep(forTimeInterval: 1)
        XCTAssertTrue(player.loadState.isEmpty)
        XCTAssertFalse(player.isPreparedToPlay, "nothing arrived: not prepared")
        player.stop()

        let clip = try MovieFixtures.clip(seconds: 2, in: folder)
        player.contentURL = clip
        player.prepareToPlay()
        XCTAssertTrue(waitUntil(timeout: 5) { player.isPreparedToPlay })
        XCTAssertTrue(player.loadState.contains(.playable))
        player.stop()
        XCTAssertFalse(player.isPreparedToPlay)
    }

    /// The seeds' thumbnail calls compile and work as written (Swift spellings of the iOS SDK).
    func testThumbnailsInTheSeedsSpelling() throws {
        let clip = try MovieFixtures.clip(seconds: 3, in: folder)
        let player = MoviePlayerController(contentURL: clip, outputs: MovieFixtures.outputs())
        if let image = player.thumbnailImage(atTime: 1.0, timeOption: .nearestKeyFrame) {
            XCTAssertEqual(image.width, 320)
            XCTAssertEqual(image.time, 1.0, accuracy: 0.05)
        } else {
            XCTFail("no thumbnail")
        }
        XCTAssertNil(MoviePlayerController(contentURL: nil).thumbnailImage(atTime: 1.0, timeOption: .exact))

        let times = Transcript()
        let observer = NotificationCenter.default.addObserver(
            forName: .moviePlayerThumbnailImageRequestDidFinish, object: player, queue: nil
        ) { note in
            let time = note.userInfo?[MoviePlayerController.thumbnailTimeUserInfoKey] as? TimeInterval
            let image = note.userInfo?[MoviePlayerController.thumbnailImageUserInfoKey] as? Thumbnail
            times.add("\(time ?? -1) \(image != nil)")
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        player.requestThumbnailImages(atTimes: [1.0, 2.0], timeOption: .exact)
        XCTAssertTrue(waitUntil(timeout: 10) { times.entries.count == 2 })
        XCTAssertEqual(times.entries, ["1.0 true", "2.0 true"], "each frame's time, with its image")
    }

    /// The seeds' default control style is the full-screen controls.
    func testControlStyleDefaultIsFullscreen() {
        let player = MoviePlayerController(contentURL: nil)
        XCTAssertEqual(player.controlStyle, .fullscreen)
        XCTAssertEqual(player.controlStyle, .default)
    }

    /// iOS adds an access log entry per playback and updates the current one: it shows while the movie plays, stays
    /// when the movie is stopped (with what it watched), and a restart adds a second entry.
    func testAccessLogHasAnEntryPerPlaybackWhileItPlays() throws {
        let clip = try MovieFixtures.clip(seconds: 6, in: folder)
        let player = MoviePlayerController(contentURL: clip, outputs: MovieFixtures.outputs())
        player.play()
        XCTAssertTrue(waitUntil(timeout: 5) { player.playbackState == .playing })
        XCTAssertTrue(
            waitUntil(timeout: 3) { (player.accessLog.last?.durationWatched ?? 0) > 0.8 },
            "nothing shows while the movie plays: \(player.accessLog)")
        XCTAssertEqual(player.playbackState, .playing)
        XCTAssertEqual(player.accessLog.count, 1)
        let during = try XCTUnwrap(player.accessLog.first)
        XCTAssertNotNil(during.startupTime)

        Thread.sleep(forTimeInterval: 0.5)
        player.stop()
        XCTAssertTrue(
            waitUntil(timeout: 3) { (player.accessLog.first?.durationWatched ?? 0) > during.durationWatched },
            "the stopped playback's entry: \(player.accessLog)")
        XCTAssertEqual(player.accessLog.count, 1, "stopping keeps the entry")

        player.play()
        XCTAssertTrue(waitUntil(timeout: 5) { player.playbackState == .playing })
        XCTAssertTrue(waitUntil(timeout: 5) { player.accessLog.count == 2 }, "\(player.accessLog)")
        XCTAssertTrue(waitUntil(timeout: 5) { (player.accessLog.last?.durationWatched ?? 0) > 0.3 })
        XCTAssertGreaterThan(player.accessLog[0].durationWatched, 1, "the first playback's entry is kept")
        player.stop()
    }

    /// docs/CastKit.md: CastKit prints nothing on the program's standard error. A movie whose subtitles cannot be
    /// drawn on its pictures (RGB video) played here to its end: the engine notes it, but not on standard error.
    func testPlayingLocallyWritesNothingOnStandardError() throws {
        let movie = try rgbMovieWithSubtitles()
        let frames = folder.appendingPathComponent("frames.md5").path
        let written = try Self.standardError(into: folder.appendingPathComponent("stderr.txt")) {
            let player = MoviePlayerController(
                contentURL: movie, outputs: MovieFixtures.outputs(video: .framemd5(path: frames)))
            let log = MoviePlayerLog(player)
            player.play()
            XCTAssertTrue(waitUntil(timeout: 10) { log.finishReason != nil })
            XCTAssertEqual(log.finishReason, .playbackEnded)
        }
        XCTAssertGreaterThan(MovieFixtures.frameTimes(frames).count, 40, "the movie played")
        XCTAssertEqual(written, "", "CastKit wrote on standard error")
    }

    // MARK: Helpers

    /// A 2 s movie of RGB pictures (FFV1 in Matroska) with a default SRT subtitle track shown all along.
    private func rgbMovieWithSubtitles() throws -> URL {
        let subtitles = folder.appendingPathComponent("s.srt")
        try Data("1\n00:00:00,000 --> 00:00:02,000\nHello there\n".utf8).write(to: subtitles)
        let url = folder.appendingPathComponent("rgb.mkv")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=2",
            "-f", "lavfi", "-i", "sine=frequency=440:duration=2", "-i", subtitles.path, "-map", "0", "-map", "1",
            "-map", "2", "-c:v", "ffv1", "-pix_fmt", "bgr0", "-c:a", "aac", "-c:s", "srt", "-disposition:s:0",
            "default", url.path,
        ]
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "ffmpeg failed")
        return url
    }

    /// What the process wrote on its standard error while `body` ran (file descriptor 2 pointed at `file`).
    private static func standardError(into file: URL, during body: () throws -> Void) throws -> String {
        fflush(nil)
        let saved = dup(2)
        let fd = open(file.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        XCTAssertGreaterThanOrEqual(fd, 0)
        dup2(fd, 2)
        close(fd)
        do {
            try body()
        } catch {
            fflush(nil)
            dup2(saved, 2)
            close(saved)
            throw error
        }
        fflush(nil)
        dup2(saved, 2)
        close(saved)
        return try String(contentsOf: file, encoding: .utf8)
    }

    /// Runs the main queue (where `queue: .main` observers run) until `condition` holds, up to `timeout` seconds.
    private static func runMainQueue(timeout: Double, until condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            if Date() > deadline { return false }
            RunLoop.main.run(until: Date().addingTimeInterval(0.01))
        }
        return true
    }
}

/// Lines observers wrote, in order, from any thread.
final class Transcript: @unchecked Sendable {
    // Invariant: `lock` guards `lines`.
    private let lock = NSLock()
    private var lines: [String] = []

    func add(_ line: String) { lock.withLock { lines.append(line) } }
    var entries: [String] { lock.withLock { lines } }
}

/// A TCP listener on loopback that never accepts or answers: an http URL whose movie never arrives. Closed by the
/// test.
final class SilentServer {
    let port: UInt16
    private let fd: Int32

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        XCTAssertEqual(bound, 0)
        XCTAssertEqual(listen(fd, 4), 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
    }

    func close() { _ = Glibc.close(fd) }
}
