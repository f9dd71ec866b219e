import CastKit
import CastProtocol
import CastTestSupport
import Foundation
import XCTest

/// The movie player moving between local output and a real castd on loopback (no discovery, `--auth none`).
final class MoviePlayerRouteTests: LoopbackReceiversTestCase {
    private func startReceiver(port: UInt16 = 0) throws -> LoopbackReceiver {
        let receiver = try LoopbackReceiver(
            stateDirectory: folder.appendingPathComponent("state").path,
            videoOut: "framemd5:" + folder.appendingPathComponent("remote.md5").path, port: port)
        receivers.append(receiver)
        return receiver
    }

    private func makePlayer(_ clip: URL, credentialsOverPlainHTTP: Bool = false) -> MoviePlayerController {
        MoviePlayerController(
            contentURL: clip,
            outputs: MovieFixtures.outputs(video: .framemd5(path: folder.appendingPathComponent("local.md5").path)),
            configuration: CastKitConfiguration(
                configDirectory: folder.appendingPathComponent("sender").path, senderName: "castkit-tests",
                storedCredentialsOverPlainHTTP: credentialsOverPlainHTTP))
    }

    /// A movie of `seconds` played on a receiver of its own, selected as the route before `play()`.
    private func playOnAReceiver(seconds: Int) throws -> (LoopbackReceiver, MoviePlayerController, MoviePlayerLog) {
        let receiver = try startReceiver()
        let clip = try MovieFixtures.clip(seconds: seconds, in: folder)
        let player = makePlayer(clip)
        let log = MoviePlayerLog(player)
        CastRoute.selected = receiver.description
        player.play()
        return (receiver, player, log)
    }

    /// The access log across moves (issue 29): an entry per playback, as iOS adds them. Playing here, the entry shows
    /// while the movie plays; moved to the receiver, the local entry is kept with what it watched and the receiver's
    /// entry is added and brought up to date while it plays there; back here, a third.
    func testAccessLogKeepsAnEntryPerPlaybackAcrossMoves() throws {
        let receiver = try startReceiver()
        let clip = try MovieFixtures.clip(seconds: 8, in: folder)
        let player = makePlayer(clip)
        player.play()
        XCTAssertTrue(waitUntil(timeout: 5) { player.currentPlaybackTime >= 1.5 })
        // The time watched of entry `index`; 0 when there is no such entry.
        func watched(_ index: Int) -> Double {
            let log = player.accessLog
            return index < log.count ? log[index].durationWatched : 0
        }
        XCTAssertEqual(player.accessLog.count, 1)
        XCTAssertGreaterThan(watched(0), 0.5, "the local entry while it plays")

        CastRoute.selected = receiver.description
        XCTAssertTrue(waitUntil(timeout: 10) { player.isAirPlayVideoActive }, "\(receiver.output)")
        XCTAssertEqual(player.accessLog.count, 2, "\(player.accessLog)")
        XCTAssertGreaterThan(watched(0), 1.3, "the moved playback's entry is kept, closed")
        XCTAssertTrue(
            waitUntil(timeout: 5) { watched(1) > 1 },
            "the receiver's entry while it plays there: \(player.accessLog)")
        XCTAssertNotNil(
            player.accessLog.dropFirst().first?.serverAddress, "the receiver's entry names where it read from")

        player.allowsAirPlay = false
        XCTAssertTrue(waitUntil(timeout: 5) { player.accessLog.count == 3 }, "\(player.accessLog)")
        XCTAssertGreaterThan(watched(1), 1, "the receiver's entry is kept")
        player.stop()
    }

    /// Remote → local → remote mid-movie: each move continues within 0.5 s of where the movie was, with
    /// `isAirPlayVideoActive` and its notification following; the movie then plays to its end.
    func testTogglingAllowsAirPlayMovesPlaybackAndBack() throws {
        let (receiver, player, log) = try playOnAReceiver(seconds: 6)
        XCTAssertTrue(waitUntil(timeout: 10) { player.isAirPlayVideoActive }, "\(receiver.output)")
        XCTAssertTrue(waitUntil(timeout: 2) { log.count(.moviePlayerIsAirPlayVideoActiveDidChange) == 1 })
        XCTAssertEqual(player.activeRoute, receiver.description)
        XCTAssertTrue(waitUntil(timeout: 10) { player.currentPlaybackTime >= 2 }, "\(log.states)")

        // Out to local.
        let beforeLocal = player.currentPlaybackTime
        player.allowsAirPlay = false
        XCTAssertFalse(player.isAirPlayVideoActive)
        XCTAssertNil(player.activeRoute)
        XCTAssertTrue(waitUntil(timeout: 2) { log.count(.moviePlayerIsAirPlayVideoActiveDidChange) == 2 })
        let localMD5 = folder.appendingPathComponent("local.md5").path
        XCTAssertTrue(waitUntil(timeout: 3) { !MovieFixtures.frameTimes(localMD5).isEmpty })
        let localFirst = try XCTUnwrap(MovieFixtures.frameTimes(localMD5).first)
        print("moved to local at \(beforeLocal) s; local's first frame at \(localFirst) s")
        XCTAssertEqual(localFirst, beforeLocal, accuracy: 0.5)
        Thread.sleep(forTimeInterval: 1)
        XCTAssertEqual(player.playbackState, .playing)
        XCTAssertEqual(player.currentPlaybackTime, beforeLocal + 1, accuracy: 0.5)

        // Back to the receiver.
        let beforeRemote = player.currentPlaybackTime
        let remoteMD5 = folder.appendingPathComponent("remote.md5").path
        let framesOfFirstSession = MovieFixtures.frameTimes(remoteMD5).count
        player.allowsAirPlay = true
        XCTAssertEqual(player.activeRoute, receiver.description)
        XCTAssertTrue(waitUntil(timeout: 10) { player.isAirPlayVideoActive }, "\(receiver.output)")
        // The property changes at once; its notification is posted on the player's delivery queue, just after.
        XCTAssertTrue(
            waitUntil(timeout: 2) { log.count(.moviePlayerIsAirPlayVideoActiveDidChange) == 3 },
            "\(log.count(.moviePlayerIsAirPlayVideoActiveDidChange)) notifications")
        // castd rewrites its framemd5 file for each session: its first line is where the second session began.
        XCTAssertTrue(
            waitUntil(timeout: 5) {
                let times = MovieFixtures.frameTimes(remoteMD5)
                return !times.isEmpty && times.first! > 0.5
            }, "first session had \(framesOfFirstSession) frames")
        let remoteFirst = try XCTUnwrap(MovieFixtures.frameTimes(remoteMD5).first)
        print("moved to the receiver at \(beforeRemote) s; its first frame at \(remoteFirst) s")
        XCTAssertEqual(remoteFirst, beforeRemote, accuracy: 0.5)

        XCTAssertTrue(waitUntil(timeout: 10) { log.finishReason != nil }, "\(log.states)")
        XCTAssertEqual(log.finishReason, .playbackEnded)
        XCTAssertEqual(log.states, [.playing, .stopped], "moves do not show in the playback state")
        XCTAssertFalse(player.isAirPlayVideoActive)
    }

    /// A paused movie stays paused, at its position, through moves both ways.
    func testMoveKeepsThePausedState() throws {
        let (receiver, player, log) = try playOnAReceiver(seconds: 6)
        XCTAssertTrue(waitUntil(timeout: 10) { player.currentPlaybackTime >= 1.5 }, "\(receiver.output)")
        player.pause()
        XCTAssertTrue(waitUntil(timeout: 3) { log.states.last == .paused })
        Thread.sleep(forTimeInterval: 0.3)
        let pausedAt = player.currentPlaybackTime

        CastRoute.selected = nil
        XCTAssertNil(player.activeRoute)
        XCTAssertFalse(player.isAirPlayVideoActive)
        let localMD5 = folder.appendingPathComponent("local.md5").path
        XCTAssertTrue(waitUntil(timeout: 3) { !MovieFixtures.frameTimes(localMD5).isEmpty })
        Thread.sleep(forTimeInterval: 0.7)
        let localFrames = MovieFixtures.frameTimes(localMD5)
        print("paused at \(pausedAt) s; local shows \(localFrames)")
        XCTAssertEqual(localFrames.count, 1, "a paused movie shows one picture")
        XCTAssertEqual(localFrames.first ?? -1, pausedAt, accuracy: 0.5)
        XCTAssertEqual(player.playbackState, .paused)
        XCTAssertEqual(player.currentPlaybackTime, pausedAt, accuracy: 0.05)

        CastRoute.selected = receiver.description
        XCTAssertTrue(waitUntil(timeout: 10) { player.isAirPlayVideoActive })
        Thread.sleep(forTimeInterval: 0.7)
        XCTAssertEqual(player.playbackState, .paused)
        XCTAssertEqual(player.currentPlaybackTime, pausedAt, accuracy: 0.3)

        player.play()
        XCTAssertTrue(waitUntil(timeout: 3) { log.states.last == .playing })
        Thread.sleep(forTimeInterval: 1)
        XCTAssertEqual(player.currentPlaybackTime, pausedAt + 1, accuracy: 0.5)
        player.stop()
        XCTAssertTrue(waitUntil(timeout: 2) { log.states.last == .stopped })
        XCTAssertEqual(log.states, [.playing, .paused, .playing, .stopped])
    }

    /// `shouldAutoplay` false on a receiver: prepared, the receiver shows the first picture and waits; it never
    /// plays, not even for a moment before the pause arrives.
    func testPreparedWithoutAutoplayOnAReceiverWaitsAtTheFirstFrame() throws {
        let receiver = try startReceiver()
        let clip = try MovieFixtures.clip(seconds: 4, in: folder)
        let player = makePlayer(clip)
        let log = MoviePlayerLog(player)
        player.shouldAutoplay = false
        CastRoute.selected = receiver.description
        player.prepareToPlay()
        XCTAssertTrue(waitUntil(timeout: 10) { player.isAirPlayVideoActive && player.readyForDisplay })
        Thread.sleep(forTimeInterval: 1)
        let remoteMD5 = folder.appendingPathComponent("remote.md5").path
        let shown = MovieFixtures.frameTimes(remoteMD5)
        print("prepared on the receiver: frames \(shown), states \(log.states), castd: \(receiver.output.suffix(5))")
        XCTAssertEqual(shown, [0], "the receiver showed the first picture only")
        XCTAssertEqual(player.playbackState, .paused)
        XCTAssertFalse(log.states.contains(.playing), "\(log.states)")
        player.play()
        XCTAssertTrue(waitUntil(timeout: 10) { log.finishReason != nil })
        XCTAssertEqual(log.finishReason, .playbackEnded)
        XCTAssertEqual(MovieFixtures.frameTimes(remoteMD5).count, 100, "then every frame")
    }

    /// A protected stream on a receiver: the receiver opens the URL itself with the credentials the program stored
    /// for the server's protection space (they travel in the play request, not in the URL), and, without autoplay,
    /// waits at the first picture without ever playing.
    ///
    /// Stored credentials go only to a receiver whose key was pinned by pairing, and for plain http only when the
    /// program opted in (issue #29): an unpaired `--auth none` receiver plays the URL without them (401).
    func testAProtectedStreamWithoutAutoplayOnAReceiver() throws {
        let clip = try MovieFixtures.clip(seconds: 2, in: folder)
        let server = try MediaServer(folder: folder, auth: "bob:pa:ss")
        defer { server.stop() }
        let forget = server.storeCredential(user: "bob", password: "pa:ss")
        defer { forget() }
        let url = try XCTUnwrap(URL(string: "http://127.0.0.1:\(server.port)/\(clip.lastPathComponent)"))

        let unpaired = try startReceiver()
        let refused = makePlayer(url, credentialsOverPlainHTTP: true)
        let refusedLog = MoviePlayerLog(refused)
        CastRoute.selected = unpaired.description
        refused.play()
        XCTAssertTrue(waitUntil(timeout: 15) { refusedLog.finishReason != nil }, "\(refusedLog.names)")
        // The receiver was asked without them: the server refused it (the movie then goes on here, as after any
        // receiver's failure).
        XCTAssertTrue(
            waitUntil(timeout: 2) { refused.errorLog.contains { $0.statusCode == 401 } }, "\(refused.errorLog)"
        )
        XCTAssertTrue(
            unpaired.output.contains { $0.contains("finished: playbackError") && $0.contains("401") },
            "the unpaired receiver got the stored credentials: \(unpaired.output.suffix(5))")
        refused.stop()
        unpaired.kill()
        for name in ["local.md5", "remote.md5"] {
            try? FileManager.default.removeItem(at: folder.appendingPathComponent(name))
        }

        let receiver = try LoopbackReceiver(
            stateDirectory: folder.appendingPathComponent("paired-state").path,
            videoOut: "framemd5:" + folder.appendingPathComponent("remote.md5").path, auth: "pin")
        receivers.append(receiver)
        _ = try Pairing.pair(
            receiver.description, configDirectory: folder.appendingPathComponent("sender").path,
            senderName: "castkit-tests"
        ) {
            var line: String?
            waitUntil(timeout: 10) {
                line = receiver.output.first { $0.hasPrefix("Pairing PIN: ") }
                return line != nil
            }
            return line.map { String($0.dropFirst("Pairing PIN: ".count)) }
        }
        let player = makePlayer(url, credentialsOverPlainHTTP: true)
        let log = MoviePlayerLog(player)
        player.shouldAutoplay = false
        CastRoute.selected = receiver.description
        player.prepareToPlay()
        XCTAssertTrue(
            waitUntil(timeout: 10) { player.isAirPlayVideoActive && player.readyForDisplay },
            "\(log.names) \(receiver.output.suffix(5))")
        Thread.sleep(forTimeInterval: 1)
        let remoteMD5 = folder.appendingPathComponent("remote.md5").path
        XCTAssertEqual(MovieFixtures.frameTimes(remoteMD5), [0], "the receiver showed the first picture only")
        XCTAssertFalse(log.states.contains(.playing), "\(log.states)")
        player.play()
        XCTAssertTrue(waitUntil(timeout: 10) { log.finishReason != nil })
        XCTAssertEqual(log.finishReason, .playbackEnded, "\(player.errorLog) \(receiver.output.suffix(5))")
        XCTAssertEqual(MovieFixtures.frameTimes(remoteMD5).count, 50, "then every frame, on the receiver")
        XCTAssertTrue(MovieFixtures.frameTimes(folder.appendingPathComponent("local.md5").path).isEmpty, "nothing here")
    }

    /// A receiver shutting down (SIGTERM: it tells the sender, with the finish code `receiverShutdown`) and not
    /// coming back: retried for 5 s exactly as a killed one, then the movie plays on here from where it was.
    func testReceiverShuttingDownContinuesLocally() throws {
        try assertContinuesLocally(retried: true) { $0.kill() }
    }

    /// A receiver dying (SIGKILL: the connection just breaks) and not coming back: the player retries it for 5 s,
    /// `.interrupted` at its position, then brings the movie back to local output from there.
    func testReceiverDyingContinuesLocally() throws {
        try assertContinuesLocally(retried: true) { $0.kill(signal: SIGKILL) }
    }

    /// castd restarting mid-play (SIGKILL, then a new castd on the same port with the same state directory, so the
    /// same key): the player keeps its route, shows `.interrupted` while it retries, and plays on at the receiver
    /// from where it was, with nothing played locally in between.
    func testReceiverRestartingResumesThereAtThePosition() throws {
        try assertResumesAfterRestart(signal: SIGKILL)
    }

    /// `systemctl restart castd` mid-play (SIGTERM: castd tells the sender it shuts down, then a new castd on the
    /// same port and state directory): as after a kill, the player retries and plays on there at its position.
    func testReceiverRestartedWithSIGTERMResumesThereAtThePosition() throws {
        try assertResumesAfterRestart(signal: SIGTERM)
    }

    private func assertResumesAfterRestart(signal: Int32) throws {
        let first = try startReceiver()
        let port = first.port
        let clip = try MovieFixtures.clip(seconds: 8, in: folder)
        let player = makePlayer(clip)
        let log = MoviePlayerLog(player)
        CastRoute.selected = first.description
        player.play()
        XCTAssertTrue(
            waitUntil(timeout: 10) { player.currentPlaybackTime >= 2 && player.isAirPlayVideoActive },
            "\(first.output)")
        let remoteMD5 = folder.appendingPathComponent("remote.md5").path
        let before = player.currentPlaybackTime
        first.kill(signal: signal)
        let killed = Date()
        XCTAssertTrue(waitUntil(timeout: 3) { player.playbackState == .interrupted }, "\(log.states)")
        XCTAssertEqual(player.activeRoute, first.description, "the route is kept while retrying")
        XCTAssertEqual(player.currentPlaybackTime, before, accuracy: 0.5)
        let lastFrameBefore = MovieFixtures.frameTimes(remoteMD5).last ?? -1
        Thread.sleep(forTimeInterval: 1)

        let second = try startReceiver(port: port)
        XCTAssertEqual(second.port, port)
        XCTAssertTrue(
            waitUntil(timeout: 5) { player.playbackState == .playing }, "\(log.states) \(second.output)")
        let resumedAfter = Date().timeIntervalSince(killed)
        XCTAssertEqual(player.activeRoute, second.description)
        XCTAssertTrue(waitUntil(timeout: 3) { player.isAirPlayVideoActive })
        // The new castd writes its framemd5 file afresh: its first frame is where the movie went on.
        XCTAssertTrue(waitUntil(timeout: 3) { (MovieFixtures.frameTimes(remoteMD5).first ?? 0) > 1 })
        let remoteFirst = try XCTUnwrap(MovieFixtures.frameTimes(remoteMD5).first)
        print(
            "castd killed at \(before) s (last frame \(lastFrameBefore) s); playing again there after "
                + "\(resumedAfter) s from its frame at \(remoteFirst) s")
        XCTAssertEqual(remoteFirst, before, accuracy: 0.5)
        XCTAssertEqual(remoteFirst, lastFrameBefore, accuracy: 0.5)
        XCTAssertTrue(waitUntil(timeout: 12) { log.finishReason != nil }, "\(log.states)")
        XCTAssertEqual(log.finishReason, .playbackEnded)
        XCTAssertEqual(log.states, [.playing, .interrupted, .playing, .stopped])
        XCTAssertTrue(
            MovieFixtures.frameTimes(folder.appendingPathComponent("local.md5").path).isEmpty,
            "nothing played here in between")
        XCTAssertEqual(try XCTUnwrap(MovieFixtures.frameTimes(remoteMD5).last), 7.96, accuracy: 0.05)
    }

    /// An audio player on a receiver that dies: its delegate hears the interruption begin and end (should resume),
    /// and it waits here, paused at its position, until told to play; then it plays to the end here.
    func testAudioPlayerOnAReceiverThatDiesIsInterrupted() throws {
        let receiver = try startReceiver()
        let tone = try AudioFixtures.tone("tone.m4a", seconds: 5, in: folder)
        let player = try AudioPlayer(
            contentsOf: tone, outputs: MovieFixtures.outputs(),
            configuration: CastKitConfiguration(
                configDirectory: folder.appendingPathComponent("sender").path, senderName: "castkit-tests"))
        let log = DelegateLog()
        player.delegate = log
        CastRoute.selected = receiver.description
        player.play()
        XCTAssertTrue(waitUntil(timeout: 10) { player.activeRoute != nil && player.currentTime >= 1 })
        let before = player.currentTime
        receiver.kill(signal: SIGKILL)
        XCTAssertTrue(waitUntil(timeout: 5) { log.calls == ["begin", "end shouldResume"] }, "\(log.calls)")
        XCTAssertTrue(waitUntil(timeout: 3) { player.activeRoute == nil })
        XCTAssertFalse(player.isPlaying)
        XCTAssertEqual(player.currentTime, before, accuracy: 0.5)
        player.play()
        XCTAssertTrue(waitUntil(timeout: 10) { log.calls.last == "finish true" }, "\(log.calls)")
    }

    /// Plays on the receiver, ends it with `end` at 1.5 s, and checks that the movie plays on locally from there to
    /// its end, with `isAirPlayVideoActive` turning false.
    /// `retried`: the connection breaks without a finish, so the player first retries the receiver for its 5 s window.
    private func assertContinuesLocally(
        retried: Bool = false, file: StaticString = #filePath, line: UInt = #line,
        after end: (LoopbackReceiver) -> Void
    ) throws {
        let (receiver, player, log) = try playOnAReceiver(seconds: 6)
        XCTAssertTrue(
            waitUntil(timeout: 10) { player.currentPlaybackTime >= 1.5 && player.isAirPlayVideoActive },
            file: file, line: line)
        let before = player.currentPlaybackTime
        let ended = Date()
        end(receiver)
        XCTAssertTrue(
            waitUntil(timeout: retried ? 10 : 5) { !player.isAirPlayVideoActive }, "\(log.names)", file: file,
            line: line)
        let localAfter = Date().timeIntervalSince(ended)
        print("receiver ended; local after \(localAfter) s")
        // Retried: the window (5 s: the last attempt starts 4.5 s in) passes first; not retried: at once.
        if retried {
            XCTAssertGreaterThan(localAfter, 4, file: file, line: line)
        } else {
            XCTAssertLessThan(localAfter, 2, file: file, line: line)
        }
        XCTAssertTrue(waitUntil(timeout: 2) { player.activeRoute == nil }, file: file, line: line)
        let localMD5 = folder.appendingPathComponent("local.md5").path
        XCTAssertTrue(
            waitUntil(timeout: 3) { !MovieFixtures.frameTimes(localMD5).isEmpty }, file: file, line: line)
        let localFirst = MovieFixtures.frameTimes(localMD5).first ?? -1
        print("receiver ended at \(before) s; local's first frame at \(localFirst) s")
        XCTAssertEqual(localFirst, before, accuracy: 0.5, file: file, line: line)
        XCTAssertTrue(waitUntil(timeout: 10) { log.finishReason != nil }, file: file, line: line)
        XCTAssertEqual(log.finishReason, .playbackEnded, file: file, line: line)
        XCTAssertEqual(
            log.states, retried ? [.playing, .interrupted, .playing, .stopped] : [.playing, .stopped], file: file,
            line: line)
    }
}
