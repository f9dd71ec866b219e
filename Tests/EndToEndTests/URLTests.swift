import CastProtocol
import Foundation
import XCTest

/// URLs the receiver opens itself: an http server on the phone host (Python, byte ranges, optional basic auth),
/// `cast send http://…` on the phone, castd on the box pulling the clip with FFmpeg's http protocol.
final class URLTests: XCTestCase {
    private var lab: Lab!
    private var work: String!
    private var receiver: Daemon!
    private var port: UInt16 = 0

    override func setUpWithError() throws {
        lab = try Lab("e2u\(getpid() % 100000)")
        work = NSTemporaryDirectory() + "cast-url-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        (receiver, port) = try lab.startRecordingReceiver(work: work)
    }

    override func tearDown() {
        lab?.tearDown()
        if let work { try? FileManager.default.removeItem(atPath: work) }
    }

    private func send(_ arguments: [String], timeout: Double = 60) throws -> CommandResult {
        try lab.run(
            on: .phone, [Paths.cast, "send"] + arguments, environment: ["XDG_CONFIG_HOME": "\(work!)/sender"],
            timeout: timeout)
    }

    private func events(_ jsonLines: String) throws -> [PlaybackEvent] {
        try jsonLines.split(separator: "\n").map { try JSONDecoder().decode(PlaybackEvent.self, from: Data($0.utf8)) }
    }

    /// Exit 0, playbackEnded, the frames presented are ffmpeg's own (bit-exact), the audio lasted the clip.
    private func assertPlayedBitExact(_ clip: String, _ result: CommandResult, line: UInt = #line) throws {
        XCTAssertEqual(result.status, 0, result.stderr, line: line)
        let received = try events(result.stdout)
        XCTAssertEqual(received.last, .finished(reason: .playbackEnded, error: nil), line: line)
        XCTAssertTrue(received.contains(.mediaTypes([.audio, .video])), "\(received)", line: line)
        XCTAssertTrue(received.contains(.loadState([.playable, .playthroughOK])), "\(received)", line: line)
        XCTAssertTrue(
            received.contains { if case .durationAvailable = $0 { true } else { false } }, "\(received)", line: line)
        let frames = Media.comparable(try String(contentsOfFile: "\(work!)/frames.md5", encoding: .utf8))
        XCTAssertEqual(frames, try Media.ffmpegFrameMD5(clip), line: line)
        XCTAssertEqual(frames.filter { !$0.hasPrefix("#") }.count, 125, line: line)
        let pcm = try Data(contentsOf: URL(fileURLWithPath: "\(work!)/audio.raw"))
        XCTAssertEqual(Double(pcm.count) / (48000 * 4), 5, accuracy: 0.1, line: line)
        XCTAssertEqual(Media.toneFrequency(ofCapture: pcm), 440, accuracy: 440 * 0.02, line: line)
        XCTAssertGreaterThan(result.seconds, 4.5, line: line)
        XCTAssertLessThan(result.seconds, 5.5 + 2, line: line)
    }

    private func resetOutputs() {
        for name in ["frames.md5", "audio.raw", "events.jsonl"] {
            try? FileManager.default.removeItem(atPath: "\(work!)/\(name)")
        }
    }

    func testHTTPURLPlaysBitExact() throws {
        let clip = try Media.clip("movie.mp4")
        let base = try lab.serveOnPhone()
        let url = "\(base)/movie.mp4"
        let result = try send([url, "--to", "Living Room", "--json"])
        try assertPlayedBitExact(clip, result)
        XCTAssertNotNil(receiver.waitForLine(containing: "plays \"\(url)\""), "\(receiver.output)")
        // No media connection was opened: the receiver pulled the URL itself.
        XCTAssertFalse(receiver.output.contains { $0.contains("media connection") }, "\(receiver.output)")
        let logged = try events(String(contentsOfFile: "\(work!)/events.jsonl", encoding: .utf8))
        XCTAssertEqual(logged.last, .finished(reason: .playbackEnded, error: nil))
        print("sent 5 s URL in \(String(format: "%.2f", result.seconds)) s")
    }

    /// Credentials kept out of the process list (issue #29): `--user-file FILE` (its first line; a file group or
    /// others can read is refused, exit 2) and the environment's `CAST_USER` play the protected URL as `--user` does.
    func testCredentialsFromAFileOrTheEnvironment() throws {
        let clip = try Media.clip("movie.mp4")
        let url = "\(try lab.serveOnPhone(auth: "alice:s3cr:t@pw"))/movie.mp4"
        let file = "\(work!)/credentials"
        try "alice:s3cr:t@pw\n".write(toFile: file, atomically: true, encoding: .utf8)
        XCTAssertEqual(chmod(file, 0o644), 0)
        let readable = try send([url, "--to", "Living Room", "--json", "--user-file", file])
        XCTAssertEqual(readable.status, 2, readable.stderr)
        XCTAssertTrue(readable.stderr.contains("has mode 0644"), readable.stderr)
        let both = try send([url, "--to", "Living Room", "--json", "--user-file", file, "--user", "alice:x"])
        XCTAssertEqual(both.status, 2, both.stderr)

        XCTAssertEqual(chmod(file, 0o600), 0)
        resetOutputs()
        try assertPlayedBitExact(clip, try send([url, "--to", "Living Room", "--json", "--user-file", file]))

        resetOutputs()
        let fromEnvironment = try lab.run(
            on: .phone, [Paths.cast, "send", url, "--to", "Living Room", "--json"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender", "CAST_USER": "alice:s3cr:t@pw"], timeout: 60)
        try assertPlayedBitExact(clip, fromEnvironment)
    }

    func testBasicAuthRightAndWrongCredentials() throws {
        let clip = try Media.clip("movie.mp4")
        let base = try lab.serveOnPhone(auth: "alice:s3cr:t@pw")
        let url = "\(base)/movie.mp4"

        // Right credentials with --user.
        let right = try send([url, "--to", "Living Room", "--json", "--user", "alice:s3cr:t@pw"])
        try assertPlayedBitExact(clip, right)

        // Wrong ones, and none: playbackError carrying the HTTP status, exit 1.
        for extra in [["--user", "alice:wrong"], []] {
            resetOutputs()
            let wrong = try send([url, "--to", "Living Room", "--json"] + extra)
            XCTAssertEqual(wrong.status, 1, "\(extra): \(wrong.stderr)")
            XCTAssertTrue(wrong.stderr.contains("401"), wrong.stderr)
            guard case .finished(.playbackError, let message, _)? = try events(wrong.stdout).last else {
                return XCTFail("\(extra): \(wrong.stdout)")
            }
            XCTAssertTrue(message?.contains("401 Unauthorized") ?? false, message ?? "")
            // The error log entry before the finish carries the HTTP status.
            let errors = try events(wrong.stdout).compactMap { event -> ErrorLogEntry? in
                if case .errorLog(let entry) = event { entry } else { nil }
            }
            XCTAssertEqual(errors.first?.statusCode, 401, "\(errors)")
            XCTAssertEqual(errors.first?.domain, "http", "\(errors)")
            XCTAssertEqual(errors.first?.uri, url, "\(errors)")
        }

        // Right credentials in the URL (percent-encoded), while `cast status` shows the URL without them.
        resetOutputs()
        let sender = try lab.start(
            on: .phone,
            [
                Paths.cast, "send", url.replacingOccurrences(of: "http://", with: "http://alice:s3cr%3At%40pw@"),
                "--to", "Living Room", "--json",
            ],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        XCTAssertNotNil(sender.waitForLine(containing: "\"position\"", timeout: 15), "\(sender.output)")
        let status = try lab.run(
            on: .phone, [Paths.cast, "status", "Living Room", "--json"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/other"])
        XCTAssertTrue(status.stdout.contains("\"title\":\"\(url)\""), status.stdout)
        XCTAssertEqual(sender.waitForExit(timeout: 15), 0, "\(sender.output)")
        XCTAssertEqual(sender.output.last, #"{"event":"finished","reason":"playbackEnded"}"#)

        // castd never logged a credential.
        for secret in ["s3cr", "wrong", "%3A"] {
            XCTAssertFalse(receiver.output.contains { $0.contains(secret) }, "\(secret) in \(receiver.output)")
        }
    }

    func testSenderVanishingStopsURLPlayback() throws {
        _ = try Media.clip("long.mp4", seconds: 20)
        let base = try lab.serveOnPhone()
        let sender = try lab.start(
            on: .phone, [Paths.cast, "send", "\(base)/long.mp4", "--to", "Living Room", "--json"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        XCTAssertNotNil(sender.waitForLine(containing: "\"position\"", timeout: 15), "\(sender.output)")
        kill(sender.pid, SIGKILL)
        XCTAssertNotNil(
            receiver.waitForLine(containing: "finished: playbackError (the sender was lost)", timeout: 10),
            "\(receiver.output)")
        let stop = try lab.run(
            on: .phone, [Paths.cast, "status", "Living Room"], environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        XCTAssertTrue(stop.stdout.contains("state: stopped"), stop.stdout)
    }

    func testFileURLIsRefused() throws {
        // A hand-made play request for a file: URL, written by openssl s_client: refused as malformed when decoded,
        // the connection is closed, nothing plays and castd keeps serving.
        let play = Message.play(PlayRequest(title: "passwd", url: "file:///etc/passwd"))
        let input = "\(work!)/play.bin"
        try Data(Message.hello(Hello(name: "s_client", software: "openssl")).frame().encoded() + play.frame().encoded())
            .write(to: URL(fileURLWithPath: input))
        _ = try lab.run(
            on: .phone,
            ["sh", "-c", "openssl s_client -connect \(lab.address(.box)):\(port) -quiet -ign_eof < \(input)"],
            timeout: 20)
        let closed = receiver.waitForLine(containing: "play.url must be an http or https URL", timeout: 5)
        XCTAssertNotNil(closed, "\(receiver.output)")
        XCTAssertTrue(closed?.contains("malformedMessage") ?? false, closed ?? "")
        XCTAssertFalse(receiver.output.contains { $0.contains(" plays ") }, "\(receiver.output)")
        XCTAssertTrue(receiver.isRunning)

        // `cast send` takes file: for a file name (there is none), and other schemes are refused by the sender.
        let result = try send(["file:///etc/passwd", "--to", "Living Room"])
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertFalse(receiver.output.contains { $0.contains(" plays ") }, "\(receiver.output)")
    }

    /// Serves ROOT on PORT (0 = any; prints "port N"), with byte ranges and, given "user:pass", basic auth.
    /// The test media server (Tests/Fixtures/media_server.py): byte ranges and optional basic auth.
    static let serverScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/media_server.py").path
}
