import CastMedia
import CastProtocol
import Foundation
import Synchronization
import XCTest

/// Playing http URLs with FFmpeg's own protocols, against a small Python server on the loopback.
final class URLPlayerTests: XCTestCase {
    private var servers: [Process] = []

    override func tearDown() {
        for server in servers where server.isRunning {
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
        servers.removeAll()
    }

    /// An http server for the files in `folder` (byte ranges, optional basic auth "user:pass"); returns its port.
    private func serve(_ folder: URL, auth: String? = nil) throws -> Int {
        try startPython([Self.serverScript, folder.path, "0"] + (auth.map { [$0] } ?? []))
    }

    /// Runs python3 with `arguments` (a script that prints "port N" once it listens); returns N.
    private func startPython(_ arguments: [String]) throws -> Int {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        servers.append(process)
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("port "), let port = Int(text.dropFirst(5)) else {
            throw NSError(domain: "URLPlayerTests", code: 1, userInfo: [NSLocalizedDescriptionKey: "no port: \(text)"])
        }
        return port
    }

    private func play(_ url: String, video: VideoOutput = .none, timeout: Double = 20) throws -> EventLog {
        let log = EventLog()
        let player = Player(url: url, configuration: PlayerConfiguration(audio: .alsa(device: "null"), video: video)) {
            log.append($0)
        }
        _ = try playToEnd(player, timeout: timeout)
        return log
    }

    /// `url` played to its end, seeked to 1.5 s half a second after it started (`exact`: to that frame).
    private func playSeekingAfterHalfASecond(_ url: String, exact: Bool) -> EventLog {
        let log = EventLog()
        let player = Player(url: url, configuration: PlayerConfiguration(audio: .alsa(device: "null"), video: .none)) {
            log.append($0)
        }
        player.start()
        Thread.sleep(forTimeInterval: 0.5)
        player.seek(to: 1.5, exact: exact)
        player.waitUntilFinished()
        return log
    }

    /// An HLS playlist `index.m3u8` in `folder` of `clip`'s streams copied into segments of about a second.
    private func hlsPlaylist(of clip: String, in folder: URL) throws -> String {
        let playlist = folder.appendingPathComponent("index.m3u8").path
        try Fixtures.run(
            "ffmpeg",
            [
                "-v", "error", "-y", "-i", clip, "-c", "copy", "-f", "hls", "-hls_time", "1", "-hls_list_size", "0",
                playlist,
            ])
        return playlist
    }

    func testHTTPURLPlaysBitExactAndSeeks() throws {
        let folder = try Fixtures.folder()
        let clip = try Fixtures.h264AAC(in: folder)
        let port = try serve(folder)
        let md5 = folder.appendingPathComponent("out.framemd5").path
        let started = Date()
        let log = try play("http://127.0.0.1:\(port)/clip.mp4", video: .framemd5(path: md5))
        XCTAssertEqual(log.finish?.reason, .playbackEnded, "\(log.events)")
        XCTAssertEqual(Date().timeIntervalSince(started), 2, accuracy: 0.5)
        XCTAssertEqual(
            Fixtures.comparable(try String(contentsOfFile: md5, encoding: .utf8)),
            Fixtures.comparable(try Fixtures.ffmpegFrameMD5(clip)))
        // The server takes byte ranges: the input is seekable and its size known.
        XCTAssertTrue(log.events.contains(.loadState([.playable, .playthroughOK])), "\(log.events)")
        PlayerTests.assertEventOrder(log, video: true)
    }

    func testHLSPlaylistPlaysBitExact() throws {
        let folder = try Fixtures.folder()
        let clip = try Fixtures.h264AAC(in: folder)
        let playlist = try hlsPlaylist(of: clip, in: folder)
        let port = try serve(folder)
        let md5 = folder.appendingPathComponent("out.framemd5").path
        let log = try play("http://127.0.0.1:\(port)/index.m3u8", video: .framemd5(path: md5))
        XCTAssertEqual(log.finish?.reason, .playbackEnded, "\(log.events)")
        XCTAssertEqual(
            Fixtures.comparable(try String(contentsOfFile: md5, encoding: .utf8)),
            Fixtures.comparable(try Fixtures.ffmpegFrameMD5(playlist)))
        XCTAssertTrue(log.events.contains(.mediaTypes([.audio, .video])), "\(log.events)")

        // A VOD playlist seeks (the demuxer moves between segments).
        let seeking = playSeekingAfterHalfASecond("http://127.0.0.1:\(port)/index.m3u8", exact: false)
        XCTAssertEqual(seeking.finish?.reason, .playbackEnded, "\(seeking.events)")
        XCTAssertTrue(seeking.events.contains(.playbackState(.seekingForward)), "\(seeking.events)")
    }

    func testCredentialsNeverReachFFmpegsLog() throws {
        let folder = try Fixtures.folder()
        let clip = try Fixtures.h264AAC(in: folder)
        _ = try hlsPlaylist(of: clip, in: folder)
        let port = try serve(folder, auth: "alice:Sesame42")
        // FFmpeg's HLS demuxer logs "Opening 'URL' for reading" for every segment (at info level): every line routed.
        let lines = Mutex<[String]>([])
        FFmpegLog.route(to: { _, line in lines.withLock { $0.append(line) } }, minimum: .info)
        defer { FFmpegLog.route(to: nil) }
        let log = try play("http://alice:Sesame42@127.0.0.1:\(port)/index.m3u8")
        XCTAssertEqual(log.finish?.reason, .playbackEnded, "\(log.events)")
        let text = lines.withLock { $0 }.joined(separator: "\n")
        XCTAssertTrue(text.contains("127.0.0.1:\(port)/index"), text)
        XCTAssertFalse(text.contains("Sesame42"), text)
    }

    func testSeekOnAnHTTPURL() throws {
        let folder = try Fixtures.folder()
        _ = try Fixtures.h264AAC(in: folder)
        let port = try serve(folder)
        let log = playSeekingAfterHalfASecond("http://127.0.0.1:\(port)/clip.mp4", exact: true)
        XCTAssertEqual(log.finish?.reason, .playbackEnded, "\(log.events)")
        XCTAssertTrue(log.events.contains(.playbackState(.seekingForward)), "\(log.events)")
    }

    func testBasicAuthRightAndWrongCredentials() throws {
        let folder = try Fixtures.folder()
        _ = try Fixtures.h264AAC(in: folder)
        let port = try serve(folder, auth: "alice:p@ss:w%rd")
        let right = try play("http://alice:p%40ss%3Aw%25rd@127.0.0.1:\(port)/clip.mp4")
        XCTAssertEqual(right.finish?.reason, .playbackEnded, "\(right.events)")
        for url in ["http://alice:nope@127.0.0.1:\(port)/clip.mp4", "http://127.0.0.1:\(port)/clip.mp4"] {
            let wrong = try play(url)
            XCTAssertEqual(wrong.finish?.reason, .playbackError)
            let message = wrong.finish?.error ?? ""
            print("wrong credentials: \(message)")
            XCTAssertTrue(message.contains("401"), message)
            XCTAssertFalse(message.contains("nope"), message)
        }
    }

    func testMissingFileIs404() throws {
        let folder = try Fixtures.folder()
        let port = try serve(folder)
        let log = try play("http://127.0.0.1:\(port)/nothing.mp4")
        XCTAssertEqual(log.finish?.reason, .playbackError)
        XCTAssertTrue(log.finish?.error?.contains("404") ?? false, log.finish?.error ?? "")
    }

    func testOtherSchemesAreRefusedBeforeFFmpegSeesThem() throws {
        for url in [
            "file:///etc/passwd", "concat:/etc/passwd|/etc/hostname", "subfile:,,start,0,end,10,,:/etc/passwd",
            "data:video/mp4;base64,AAAA", "pipe:0", "/etc/passwd", "hls+file:///etc/passwd", "ftp://host/x.mp4",
            "http://host/a b.mp4", "http://host/a\r\nX-Injected: 1", "http://",
        ] {
            let log = try play(url, timeout: 5)
            XCTAssertEqual(log.finish?.reason, .playbackError, url)
            let message = log.finish?.error ?? ""
            XCTAssertTrue(
                message.contains("only http and https") || message.contains("percent-encode")
                    || message.contains("needs a host"),
                "\(url): \(message)")
            XCTAssertEqual(log.events.suffix(2).first, .playbackState(.stopped), url)
        }
    }

    func testUpperCaseSchemeIsAccepted() throws {
        let folder = try Fixtures.folder()
        _ = try Fixtures.h264AAC(in: folder)
        let port = try serve(folder)
        let log = try play("HTTP://127.0.0.1:\(port)/clip.mp4")
        XCTAssertEqual(log.finish?.reason, .playbackEnded, "\(log.events)")
    }

    func testRefusedConnectionEndsPromptly() throws {
        // A port nothing listens on: connection refused, a few reconnects, then playbackError.
        let port = try startPython([
            "-c",
            "import socket,sys; s=socket.socket(); s.bind(('127.0.0.1',0)); print('port', s.getsockname()[1], flush=True)",
        ])
        let started = Date()
        let log = try play("http://127.0.0.1:\(port)/clip.mp4", timeout: 30)
        XCTAssertEqual(log.finish?.reason, .playbackError)
        print("refused after \(Date().timeIntervalSince(started)) s: \(log.finish?.error ?? "")")
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
    }

    func testStopAbortsAnOpenThatHangs() throws {
        // A server that accepts connections and never answers.
        let script = """
            import socket, time
            s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(8)
            print('port', s.getsockname()[1], flush=True)
            held = []
            while True:
                c, _ = s.accept(); held.append(c)
            """
        let port = try startPython(["-c", script])
        let log = EventLog()
        let player = Player(
            url: "http://127.0.0.1:\(port)/clip.mp4", configuration: PlayerConfiguration(audio: .none, video: .none)
        ) { log.append($0) }
        player.start()
        Thread.sleep(forTimeInterval: 1)
        XCTAssertNil(log.finish)
        let took = stopAndWait(player)
        print("stop during a hung open took \(took) s")
        XCTAssertLessThan(took, 1)
        XCTAssertEqual(log.finish?.reason, .userExited)
    }

    func testRedaction() {
        XCTAssertEqual(URLInput.redacted("http://u:p@host:80/a@b.mp4"), "http://host:80/a@b.mp4")
        XCTAssertEqual(URLInput.redacted("https://host/x.mp4"), "https://host/x.mp4")
    }

    /// Serves ROOT on PORT (0 = any; prints "port N"), with byte ranges and, given "user:pass", basic auth.
    /// The test media server (Tests/Fixtures/media_server.py): byte ranges and optional basic auth.
    static let serverScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/media_server.py").path
}
