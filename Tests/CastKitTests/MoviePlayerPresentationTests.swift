import CastKit
import CastMedia
import CastProtocol
import CastTestSupport
import Foundation
import FoundationNetworking
import Synchronization
import XCTest

/// The movie player's presentation and flow properties: repeat, end time, scrubbing, full screen, scaling, source
/// type, http URLs. Local playback: audio to ALSA's `null`, video as framemd5 where frames are checked.
final class MoviePlayerPresentationTests: LocalPlaybackTestCase {
    func testDefaults() {
        let player = MoviePlayerController(contentURL: nil, outputs: MovieFixtures.outputs())
        XCTAssertEqual(player.scalingMode, .aspectFit)
        XCTAssertEqual(player.controlStyle, .default)
        XCTAssertFalse(player.isFullscreen)
        XCTAssertEqual(player.repeatMode, .none)
        XCTAssertEqual(player.movieSourceType, .unknown)
        XCTAssertEqual(player.playableDuration, 0)
        player.controlStyle = .embedded
        XCTAssertEqual(player.controlStyle, .embedded)
    }

    /// Repeat one starts the movie again without a finish; endPlaybackTime ends it there.
    func testRepeatOneAndEndPlaybackTime() throws {
        let clip = try MovieFixtures.clip(seconds: 1, in: folder)
        let player = MoviePlayerController(contentURL: clip, outputs: MovieFixtures.outputs())
        let log = MoviePlayerLog(player)
        player.repeatMode = .one
        player.play()
        Thread.sleep(forTimeInterval: 2.6)
        XCTAssertNil(log.finishReason, "repeating: no finish")
        XCTAssertEqual(player.playbackState, .playing)
        XCTAssertLessThan(player.currentPlaybackTime, 1.01)
        player.stop()
        XCTAssertTrue(waitUntil(timeout: 2) { log.finishReason == .userExited })

        let long = try MovieFixtures.clip(seconds: 4, in: folder)
        let ending = MoviePlayerController(contentURL: long, outputs: MovieFixtures.outputs())
        let endLog = MoviePlayerLog(ending)
        ending.endPlaybackTime = 1
        let started = Date()
        ending.play()
        XCTAssertTrue(waitUntil(timeout: 5) { endLog.finishReason != nil })
        XCTAssertEqual(endLog.finishReason, .playbackEnded)
        XCTAssertLessThan(Date().timeIntervalSince(started), 2.5, "ended at endPlaybackTime, not at the movie's end")
        XCTAssertEqual(ending.currentPlaybackTime, 1, accuracy: 0.3)
    }

    /// Scrubbing: the state is seekingForward/Backward while the position moves, then playing again where it got to.
    func testScrubbingForwardAndBackward() throws {
        let clip = try MovieFixtures.clip(seconds: 8, in: folder)
        let player = MoviePlayerController(contentURL: clip, outputs: MovieFixtures.outputs())
        player.play()
        XCTAssertTrue(waitUntil(timeout: 5) { player.playbackState == .playing })
        let before = player.currentPlaybackTime
        player.beginSeekingForward()
        XCTAssertEqual(player.playbackState, .seekingForward)
        Thread.sleep(forTimeInterval: 0.6)
        XCTAssertEqual(player.playbackState, .seekingForward, "the engine's pause does not show while scrubbing")
        XCTAssertGreaterThanOrEqual(player.currentPlaybackTime, before + 3.5)
        player.endSeeking()
        XCTAssertEqual(player.playbackState, .playing)
        let reached = player.currentPlaybackTime
        player.beginSeekingBackward()
        XCTAssertEqual(player.playbackState, .seekingBackward)
        Thread.sleep(forTimeInterval: 0.6)
        XCTAssertLessThanOrEqual(player.currentPlaybackTime, reached - 3)
        player.pause()
        player.endSeeking()
        XCTAssertEqual(player.playbackState, .playing, "ends as it was before the scrub")
        XCTAssertTrue(waitUntil(timeout: 3) { player.playbackState == .playing })
        player.stop()
    }

    /// Full screen posts will/did with the animation keys in order; scaling mode and source type are kept.
    func testFullscreenNotificationsScalingAndSourceType() throws {
        let clip = try MovieFixtures.clip(seconds: 2, in: folder)
        let frames = folder.appendingPathComponent("frames.md5").path
        let player = MoviePlayerController(
            contentURL: clip, outputs: MovieFixtures.outputs(video: .framemd5(path: frames)))
        let log = MoviePlayerLog(player)
        let durations = Mutex<[TimeInterval]>([])
        let token = NotificationCenter.default.addObserver(
            forName: .moviePlayerDidEnterFullscreen, object: player, queue: nil
        ) {
            note in
            let duration =
                note.userInfo?[MoviePlayerController.fullscreenAnimationDurationUserInfoKey] as? TimeInterval ?? -1
            durations.withLock { $0.append(duration) }
            XCTAssertEqual(
                note.userInfo?[MoviePlayerController.fullscreenAnimationCurveUserInfoKey] as? String, "easeInOut")
        }
        defer { NotificationCenter.default.removeObserver(token) }
        player.setFullscreen(true, animated: true)
        XCTAssertTrue(player.isFullscreen)
        player.isFullscreen = false
        player.isFullscreen = false  // no change: nothing posted
        XCTAssertTrue(waitUntil(timeout: 2) { log.names.count == 4 })
        XCTAssertEqual(
            log.names,
            [
                .moviePlayerWillEnterFullscreen, .moviePlayerDidEnterFullscreen, .moviePlayerWillExitFullscreen,
                .moviePlayerDidExitFullscreen,
            ])
        XCTAssertEqual(durations.withLock { $0 }, [0.3])

        player.scalingMode = .aspectFill
        XCTAssertEqual(player.scalingMode, .aspectFill)
        player.play()
        XCTAssertTrue(waitUntil(timeout: 10) { log.finishReason != nil })
        XCTAssertEqual(player.movieSourceType, .file)
        XCTAssertEqual(player.playableDuration, 2, accuracy: 0.1)
        XCTAssertEqual(MovieFixtures.frameTimes(frames).count, 50, "every frame presented")
    }

    /// The seeds' other notifications: the now-playing movie changed (setting `contentURL`), the scaling mode changed,
    /// the source type became known; and the natural size announced again when a stream switches resolution.
    func testNowPlayingScalingSourceTypeAndNaturalSizeChangesArePosted() throws {
        // An MPEG-TS that switches from 320×240 to 640×360 after a second (two streams back to back, as a broadcast or
        // an adaptive stream changes resolution).
        var parts: [Data] = []
        for (index, size) in ["320x240", "640x360"].enumerated() {
            let part = folder.appendingPathComponent("part\(index).ts")
            let make = Process()
            make.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            make.arguments = [
                "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=25:duration=1",
                "-c:v", "libx264", "-pix_fmt", "yuv420p", "-output_ts_offset", "\(index)", part.path,
            ]
            try make.run()
            make.waitUntilExit()
            XCTAssertEqual(make.terminationStatus, 0)
            parts.append(try Data(contentsOf: part))
        }
        let switching = folder.appendingPathComponent("switching.ts")
        try parts.reduce(Data(), +).write(to: switching)
        let other = try MovieFixtures.clip(seconds: 1, in: folder)

        let player = MoviePlayerController(contentURL: switching, outputs: MovieFixtures.outputs())
        let posted = Mutex<[(name: Notification.Name, size: CGSize)]>([])
        let names: [Notification.Name] = [
            .moviePlayerNowPlayingMovieDidChange, .moviePlayerScalingModeDidChange, .movieSourceTypeAvailable,
            .movieNaturalSizeAvailable, .moviePlayerPlaybackDidFinish,
        ]
        let tokens = names.map { name in
            NotificationCenter.default.addObserver(forName: name, object: player, queue: nil) { note in
                let size = (note.object as? MoviePlayerController)?.naturalSize ?? .zero
                posted.withLock { $0.append((note.name, size)) }
            }
        }
        defer { for token in tokens { NotificationCenter.default.removeObserver(token) } }
        func count(_ name: Notification.Name) -> Int { posted.withLock { $0.filter { $0.name == name }.count } }

        player.scalingMode = .aspectFill
        player.scalingMode = .aspectFill  // no change: nothing posted
        player.play()
        XCTAssertTrue(waitUntil(timeout: 15) { count(.moviePlayerPlaybackDidFinish) == 1 })
        XCTAssertEqual(count(.moviePlayerScalingModeDidChange), 1)
        XCTAssertEqual(count(.movieSourceTypeAvailable), 1)
        XCTAssertEqual(player.movieSourceType, .file)
        let sizes = posted.withLock { $0.filter { $0.name == .movieNaturalSizeAvailable }.map(\.size) }
        XCTAssertEqual(sizes, [CGSize(width: 320, height: 240), CGSize(width: 640, height: 360)])
        XCTAssertEqual(player.naturalSize, CGSize(width: 640, height: 360))

        player.contentURL = other
        player.contentURL = other  // the same movie: nothing posted
        XCTAssertTrue(waitUntil(timeout: 2) { count(.moviePlayerNowPlayingMovieDidChange) == 1 })
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertEqual(count(.moviePlayerNowPlayingMovieDidChange), 1)
    }

    /// An http URL plays here (FFmpeg opens it) as a streaming source.
    func testAnHTTPURLPlaysAsAStream() throws {
        let clip = try MovieFixtures.clip(seconds: 1, in: folder)
        let server = try MediaServer(folder: folder)
        defer { server.stop() }
        let port = server.port
        let url = try XCTUnwrap(URL(string: "http://127.0.0.1:\(port)/\(clip.lastPathComponent)"))
        let player = MoviePlayerController(contentURL: url, outputs: MovieFixtures.outputs())
        let log = MoviePlayerLog(player)
        player.play()
        XCTAssertTrue(waitUntil(timeout: 10) { log.finishReason != nil }, "\(log.names)")
        XCTAssertEqual(log.finishReason, .playbackEnded)
        XCTAssertEqual(player.movieSourceType, .streaming)
        XCTAssertEqual(player.duration, 1, accuracy: 0.1)

        // A missing file on the server: a playback error, and the error log has the HTTP status.
        let missing = MoviePlayerController(
            contentURL: URL(string: "http://127.0.0.1:\(port)/missing.mp4"), outputs: MovieFixtures.outputs())
        let missingLog = MoviePlayerLog(missing)
        missing.play()
        XCTAssertTrue(waitUntil(timeout: 10) { missingLog.finishReason == .playbackError })
        XCTAssertTrue(waitUntil(timeout: 2) { !missing.errorLog.isEmpty })
        XCTAssertEqual(missing.errorLog.last?.statusCode, 404, "\(missing.errorLog)")
        XCTAssertEqual(missing.errorLog.last?.domain, "http")

        let ftp = MoviePlayerController(
            contentURL: URL(string: "ftp://127.0.0.1/x.mp4"), outputs: MovieFixtures.outputs())
        let ftpLog = MoviePlayerLog(ftp)
        ftp.play()
        XCTAssertTrue(waitUntil(timeout: 3) { ftpLog.finishReason == .playbackError })
    }

    /// A protected stream plays with the credentials the program stored for its server's protection space
    /// (URLCredentialStorage, the seeds' NSURLCredentialStorage); without them it is a 401 playback error.
    func testStoredCredentialsOpenAProtectedStream() throws {
        let clip = try MovieFixtures.clip(seconds: 1, in: folder)
        let server = try MediaServer(folder: folder, auth: "alice:s3cr:t@pw")
        defer { server.stop() }
        let url = try XCTUnwrap(URL(string: "http://127.0.0.1:\(server.port)/\(clip.lastPathComponent)"))

        let refused = MoviePlayerController(contentURL: url, outputs: MovieFixtures.outputs())
        let refusedLog = MoviePlayerLog(refused)
        refused.play()
        XCTAssertTrue(
            waitUntil(timeout: 10) { refusedLog.finishReason == .playbackError }, "\(refusedLog.names)")
        XCTAssertTrue(waitUntil(timeout: 2) { !refused.errorLog.isEmpty })
        XCTAssertEqual(refused.errorLog.last?.statusCode, 401, "\(refused.errorLog)")

        let forget = server.storeCredential(user: "alice", password: "s3cr:t@pw")
        defer { forget() }
        let player = MoviePlayerController(contentURL: url, outputs: MovieFixtures.outputs())
        let log = MoviePlayerLog(player)
        player.play()
        XCTAssertTrue(waitUntil(timeout: 10) { log.finishReason != nil }, "\(log.names)")
        XCTAssertEqual(log.finishReason, .playbackEnded, "\(player.errorLog)")
        XCTAssertEqual(player.duration, 1, accuracy: 0.1)
        // The logs show the URL as the program gave it, without the credentials.
        XCTAssertEqual(player.accessLog.last?.uri, url.absoluteString)
    }

    /// `shouldAutoplay = false` on a stream: `prepareToPlay()` opens it and shows its first picture, and it waits
    /// paused; it never reports `.playing` and no later frame is presented until `play()`.
    func testAStreamWithoutAutoplayWaitsAtItsFirstPicture() throws {
        let clip = try MovieFixtures.clip(seconds: 2, in: folder)
        let server = try MediaServer(folder: folder)
        defer { server.stop() }
        let url = try XCTUnwrap(URL(string: "http://127.0.0.1:\(server.port)/\(clip.lastPathComponent)"))
        let md5 = folder.appendingPathComponent("stream.md5").path
        let player = MoviePlayerController(contentURL: url, outputs: MovieFixtures.outputs(video: .framemd5(path: md5)))
        let log = MoviePlayerLog(player)
        player.shouldAutoplay = false
        player.prepareToPlay()
        XCTAssertTrue(waitUntil(timeout: 10) { player.readyForDisplay }, "\(log.names)")
        Thread.sleep(forTimeInterval: 1)
        XCTAssertEqual(MovieFixtures.frameTimes(md5), [0], "the first picture only")
        XCTAssertFalse(log.states.contains(.playing), "\(log.states)")
        XCTAssertEqual(player.playbackState, .paused)
        XCTAssertEqual(player.currentPlaybackTime, 0, accuracy: 0.05)
        player.play()
        XCTAssertTrue(waitUntil(timeout: 10) { log.finishReason != nil })
        XCTAssertEqual(log.finishReason, .playbackEnded)
        XCTAssertEqual(MovieFixtures.frameTimes(md5).count, 50, "then every frame")
    }
}

/// The test media server (Tests/Fixtures/media_server.py) on loopback: byte ranges, and basic auth with `auth`.
final class MediaServer {
    let port: Int
    private let process = Process()

    init(folder: URL, auth: String? = nil) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            [
                "python3", MovieFixtures.package.appendingPathComponent("Tests/Fixtures/media_server.py").path,
                folder.path, "0",
            ]
            + (auth.map { [$0] } ?? [])
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        // "port N\n" may arrive in pieces.
        var printed = Data()
        while !printed.contains(UInt8(ascii: "\n")) {
            let chunk = pipe.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            printed.append(chunk)
        }
        let line = String(decoding: printed, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard line.hasPrefix("port "), let port = Int(line.dropFirst(5)) else {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "media_server.py said \(line)"])
        }
        self.port = port
    }

    /// Stores a credential for this server's protection space (realm "cast", basic) in `URLCredentialStorage.shared`,
    /// as a program would; returns what removes it again.
    func storeCredential(user: String, password: String) -> () -> Void {
        let space = URLProtectionSpace(
            host: "127.0.0.1", port: port, protocol: "http", realm: "cast",
            authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        let credential = URLCredential(user: user, password: password, persistence: .forSession)
        URLCredentialStorage.shared.set(credential, for: space)
        return { URLCredentialStorage.shared.remove(credential, for: space) }
    }

    /// Stops the server (the process this test started, by pid).
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }
}
