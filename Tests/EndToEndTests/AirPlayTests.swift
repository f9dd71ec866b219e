import CastProtocol
import Foundation
import XCTest

/// castd's AirPlay video service driven by a real AirPlay client: pyatv 0.18.0's `atvremote` (installed once into a
/// cached virtualenv by Tests/Fixtures/pyatv_venv.sh) on the phone host, castd `--airplay-video` on the box, the
/// clip served over http from the phone (Tests/Fixtures/media_server.py), and a Cast sender watching.
final class AirPlayTests: XCTestCase {
    private var lab: Lab!
    private var work: String!
    private var receiver: Daemon!
    private var airPlayPort: UInt16 = 0
    private var deviceID = ""

    override func setUpWithError() throws {
        lab = try Lab("e2a\(getpid() % 100000)")
        work = NSTemporaryDirectory() + "cast-airplay-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
    }

    override func tearDown() {
        lab?.tearDown()
        if let work { try? FileManager.default.removeItem(atPath: work) }
    }

    /// castd recording what it plays (see `startRecordingReceiver`), with AirPlay video on a free port.
    private func startReceiver(extra: [String] = []) throws {
        (receiver, _) = try lab.startRecordingReceiver(work: work, extra: ["--airplay-video", "--airplay-port", "0"] + extra)
        let line = try XCTUnwrap(receiver.waitForLine(containing: "AirPlay video on port"), "\(receiver.output)")
        let words = line.split(separator: " ")
        airPlayPort = try XCTUnwrap(words.drop { $0 != "port" }.dropFirst().first.flatMap { UInt16($0) }, line)
        deviceID = try XCTUnwrap(words.drop { $0 != "(deviceid" }.dropFirst().first.map { String($0.dropLast(2)) }, line)
        XCTAssertNotNil(receiver.waitForLine(containing: "(_airplay._tcp) on mDNS"), "\(receiver.output)")
    }

    /// The atvremote of the cached pyatv virtualenv (made on first use, from PyPI).
    private func atvremote() throws -> String {
        let script = Paths.package.appendingPathComponent("Tests/Fixtures/pyatv_venv.sh").path
        let result = try runCommand([script], timeout: 300)
        guard result.status == 0 else { throw Media.MediaError(message: "cannot make the pyatv virtualenv: \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `atvremote … play_url=URL` against castd, as a pyatv user types it (manual mode: no scan).
    private func playURLArguments(_ atvremote: String, _ url: String) -> [String] {
        [atvremote, "--storage", "none", "--manual", "--address", lab.address(.box), "--port", String(airPlayPort),
         "--protocol", "airplay", "--id", deviceID, "--service-properties", ";features=0x1;deviceid=\(deviceID)",
         "play_url=\(url)"]
    }

    /// Starts the http server on the phone for the test clips; returns the base URL (`http://ADDR:PORT`).
    private func serve() throws -> String {
        let server = try lab.start(on: .phone, ["python3", URLTests.serverScript, Media.folder.path, "0"])
        let line = try XCTUnwrap(server.waitForLine(containing: "port "), "\(server.output)")
        return "http://\(lab.address(.phone)):\(try XCTUnwrap(line.split(separator: " ").last))"
    }

    private func watch() throws -> Daemon {
        let watcher = try lab.start(
            on: .phone, [Paths.cast, "watch", "Living Room", "--json"], environment: ["XDG_CONFIG_HOME": "\(work!)/watcher"])
        XCTAssertNotNil(watcher.waitForLine(containing: #""state":"stopped""#, timeout: 10), "\(watcher.output)")
        return watcher
    }

    private func events(_ lines: [String]) -> [PlaybackEvent] {
        lines.compactMap { try? JSONDecoder().decode(PlaybackEvent.self, from: Data($0.utf8)) }
    }

    /// One HTTP exchange from the phone, raw bytes in, the whole answer out (python3: no curl in the lab).
    private func exchange(_ request: String, timeout: Double = 15) throws -> String {
        let script = """
            import socket, sys
            s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=12)
            s.sendall(sys.stdin.buffer.read())
            out = b""
            try:
                while True:
                    chunk = s.recv(65536)
                    if not chunk: break
                    out += chunk
            except socket.timeout:
                pass
            sys.stdout.write(out.decode("latin-1"))
            """
        return try runCommand(
            [Paths.lab, "exec", lab.name, "phone", "python3", "-c", script, lab.address(.box), String(airPlayPort)],
            timeout: timeout, input: Data(request.utf8)
        ).stdout
    }

    func testPyatvPlayURLPlaysBitExactAndCastWatchersSeeIt() throws {
        let clip = try Media.clip("movie.mp4")
        let atvremote = try atvremote()
        try startReceiver()
        let url = "\(try serve())/movie.mp4"
        let watcher = try watch()

        let result = try lab.run(on: .phone, playURLArguments(atvremote, url), timeout: 60)
        XCTAssertEqual(result.status, 0, "stdout: \(result.stdout)\nstderr: \(result.stderr)\ncastd: \(receiver.output)")

        // The frames presented are ffmpeg's own, bit for bit; the audio lasted the clip at 440 Hz.
        let frames = Media.comparable(try String(contentsOfFile: "\(work!)/frames.md5", encoding: .utf8))
        XCTAssertEqual(frames, try Media.ffmpegFrameMD5(clip))
        XCTAssertEqual(frames.filter { !$0.hasPrefix("#") }.count, 125)
        let pcm = try Data(contentsOf: URL(fileURLWithPath: "\(work!)/audio.raw"))
        XCTAssertEqual(Double(pcm.count) / (48000 * 4), 5, accuracy: 0.1)
        XCTAssertEqual(Media.toneFrequency(ofCapture: pcm), 440, accuracy: 440 * 0.02)
        // pyatv polls once a second and returns at the first answer without a duration after the end.
        XCTAssertGreaterThan(result.seconds, 4.5)
        // A generous bound that catches a session that never ends (pyatv's own start takes seconds on a loaded machine).
        XCTAssertLessThan(result.seconds, 5 + 15)

        // The Cast watcher saw the AirPlay session: playing, then the end, in that order.
        XCTAssertNotNil(watcher.waitForLine(containing: #""reason":"playbackEnded""#, timeout: 5), "\(watcher.output)")
        let seen = events(watcher.output)
        let playing = try XCTUnwrap(seen.firstIndex(of: .playbackState(.playing)), "\(watcher.output)")
        let finished = try XCTUnwrap(seen.firstIndex(of: .finished(reason: .playbackEnded, error: nil)), "\(watcher.output)")
        XCTAssertLessThan(playing, finished)
        XCTAssertTrue(seen.contains { if case .durationAvailable = $0 { true } else { false } }, "\(seen)")

        // So did castd --events, and the log names the AirPlay client and the URL.
        let logged = events(try String(contentsOfFile: "\(work!)/events.jsonl", encoding: .utf8).split(separator: "\n").map(String.init))
        XCTAssertEqual(logged.last, .finished(reason: .playbackEnded, error: nil))
        XCTAssertNotNil(receiver.waitForLine(containing: "plays \"\(url)\""), "\(receiver.output)")
        XCTAssertTrue(receiver.output.contains { $0.contains("AirPlay client") && $0.contains("plays") }, "\(receiver.output)")
        print("atvremote play_url of a 5 s clip took \(String(format: "%.2f", result.seconds)) s; \(frames.count - frames.filter { $0.hasPrefix("#") }.count) frames matched")
    }

    func testPyatvScanFindsTheAirPlayAdvertisement() throws {
        let atvremote = try atvremote()
        try startReceiver()
        // pyatv's own mDNS (multicast from the phone's namespace; nothing leaves the lab).
        let scan = try lab.run(on: .phone, [atvremote, "--storage", "none", "-t", "4", "scan"], timeout: 60)
        XCTAssertEqual(scan.status, 0, scan.stderr)
        XCTAssertTrue(scan.stdout.contains("Name: Living Room"), scan.stdout)
        XCTAssertTrue(scan.stdout.contains(deviceID), scan.stdout)
        XCTAssertTrue(scan.stdout.contains("Protocol: AirPlay, Port: \(airPlayPort)"), scan.stdout)
        // The record as avahi sees it: features without ft.
        let browse = try lab.run(on: .phone, ["avahi-browse", "-prt", "_airplay._tcp"], timeout: 20)
        let record = try XCTUnwrap(browse.stdout.split(separator: "\n").first { $0.hasPrefix("=") }, browse.stdout)
        XCTAssertTrue(record.contains("\"features=0x1\""), String(record))
        XCTAssertTrue(record.contains("\"deviceid=\(deviceID)\""), String(record))
        XCTAssertFalse(record.contains("\"ft="), String(record))
        print(scan.stdout)
    }

    func testDroppedConnectionStopsPlaybackAndWatchersAreTold() throws {
        _ = try Media.clip("long.mp4", seconds: 20)
        let atvremote = try atvremote()
        try startReceiver()
        let url = "\(try serve())/long.mp4"
        let watcher = try watch()
        let client = try lab.start(on: .phone, playURLArguments(atvremote, url))
        XCTAssertNotNil(watcher.waitForLine(containing: #""state":"playing""#, timeout: 15), "\(watcher.output)")
        kill(client.pid, SIGKILL)
        XCTAssertNotNil(
            receiver.waitForLine(containing: "finished: playbackError (the AirPlay client was lost)", timeout: 10),
            "\(receiver.output)")
        XCTAssertNotNil(watcher.waitForLine(containing: "the AirPlay client was lost", timeout: 5), "\(watcher.output)")
        let status = try lab.run(on: .phone, [Paths.cast, "status", "Living Room"], environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        XCTAssertTrue(status.stdout.contains("state: stopped"), status.stdout)
    }

    func testBadRequestsGetClearAnswersAndCastdKeepsServing() throws {
        try startReceiver()
        // Unknown route, garbage, an oversize header block, a body over 64 KiB, a file: URL, a missing URL.
        XCTAssertTrue(try exchange("GET /reverse HTTP/1.1\r\nConnection: close\r\n\r\n").hasPrefix("HTTP/1.1 404 "))
        XCTAssertTrue(try exchange("\u{1}\u{2}garbage\r\n\r\n").hasPrefix("HTTP/1.1 400 "))
        let huge = "GET /server-info HTTP/1.1\r\n" + (0..<400).map { "X-\($0): \(String(repeating: "a", count: 60))\r\n" }.joined() + "\r\n"
        XCTAssertTrue(try exchange(huge).hasPrefix("HTTP/1.1 431 "))
        XCTAssertTrue(try exchange("POST /play HTTP/1.1\r\nContent-Length: 1000000\r\n\r\n").hasPrefix("HTTP/1.1 413 "))
        let file = "Content-Location: file:///etc/passwd\nStart-Position: 0\n"
        let refused = try exchange("POST /play HTTP/1.1\r\nContent-Length: \(file.utf8.count)\r\nConnection: close\r\n\r\n\(file)")
        XCTAssertTrue(refused.hasPrefix("HTTP/1.1 400 "), refused)
        XCTAssertTrue(refused.contains("must be an http or https URL"), refused)
        // Two requests on one persistent connection, each answered with a Content-Length.
        let two = try exchange("GET /scrub HTTP/1.1\r\n\r\nGET /server-info HTTP/1.1\r\nConnection: close\r\n\r\n")
        XCTAssertTrue(two.hasPrefix("HTTP/1.1 200 OK\r\nContent-Type: text/parameters\r\nContent-Length: 38\r\n\r\nduration: 0.000000\nposition: 0.000000\nHTTP/1.1 200 OK\r\n"), two)
        XCTAssertTrue(two.contains("bplist00"), two)
        // A request that never completes is answered 408 after the request timeout (10 s) and closed.
        let started = Date()
        XCTAssertTrue(try exchange("GET /playback-info HTTP/1.1\r\nX-Slow: ", timeout: 20).hasPrefix("HTTP/1.1 408 "))
        XCTAssertEqual(Date().timeIntervalSince(started), 10, accuracy: 2)
        XCTAssertFalse(receiver.output.contains { $0.contains(" plays ") }, "\(receiver.output)")
        XCTAssertTrue(receiver.isRunning)
    }

    func testConfigFileTurnsAirPlayVideoOnAndOffAndItIsOffByDefault() throws {
        func castd(config: String?) throws -> Daemon {
            var arguments = [Paths.castd, "--auth", "none", "--port", "0", "--state-dir", "\(work!)/state",
                "--video-out", "none", "--audio-device", "none", "--no-advertise"]
            if let config {
                let path = "\(work!)/castd-\(UUID().uuidString).conf"
                try config.write(toFile: path, atomically: true, encoding: .utf8)
                arguments += ["--config", path]
            }
            let daemon = try lab.start(on: .box, arguments)
            _ = try daemon.listeningPort()
            return daemon
        }
        for (config, on) in [(nil, false), ("airplay-video = no\n", false), ("airplay-video = yes\nairplay-port = 0\n", true)] {
            let daemon = try castd(config: config)
            let line = daemon.waitForLine(containing: "AirPlay video on port", timeout: on ? 10 : 1)
            XCTAssertEqual(line != nil, on, "\(String(describing: config)): \(daemon.output)")
            daemon.stop()
        }
        let wrong = try lab.run(on: .box, [Paths.castd, "--airplay-port", "7000", "--state-dir", "\(work!)/state"])
        XCTAssertEqual(wrong.status, 2, wrong.stderr)
        XCTAssertTrue(wrong.stderr.contains("--airplay-port needs --airplay-video"), wrong.stderr)
    }

    func testTakeoverPolicyAppliesBetweenAirPlayAndCast() throws {
        _ = try Media.clip("long.mp4", seconds: 20)
        let atvremote = try atvremote()
        try startReceiver(extra: ["--takeover", "deny"])
        let url = "\(try serve())/long.mp4"
        // deny: while a Cast sender plays, an AirPlay /play is answered 503 and nothing changes.
        let sender = try lab.start(
            on: .phone, [Paths.cast, "send", url, "--to", "Living Room", "--json"], environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        XCTAssertNotNil(sender.waitForLine(containing: #""state":"playing""#, timeout: 15), "\(sender.output)")
        let body = "Content-Location: \(url)\nStart-Position: 0\n"
        let busy = try exchange("POST /play HTTP/1.1\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
        XCTAssertTrue(busy.hasPrefix("HTTP/1.1 503 "), busy)
        XCTAssertTrue(sender.isRunning, "\(sender.output)")
        kill(sender.pid, SIGINT)
        _ = sender.waitForExit(timeout: 10)
        receiver.stop()

        // allow: a Cast sender takes over from an AirPlay client, which then reads the error and fails.
        try startReceiver()
        let client = try lab.start(on: .phone, playURLArguments(atvremote, url))
        XCTAssertNotNil(
            receiver.waitForLine(timeout: 15) { $0.contains("AirPlay client") && $0.contains(" plays ") }, "\(receiver.output)")
        Thread.sleep(forTimeInterval: 2)
        let takeover = try lab.start(
            on: .phone, [Paths.cast, "send", url, "--to", "Living Room", "--json"], environment: ["XDG_CONFIG_HOME": "\(work!)/other"])
        XCTAssertNotNil(takeover.waitForLine(containing: #""state":"playing""#, timeout: 15), "\(takeover.output)")
        XCTAssertNotNil(receiver.waitForLine(containing: "takes over from AirPlay client"), "\(receiver.output)")
        let status = client.waitForExit(timeout: 10)
        XCTAssertNotNil(status, "atvremote still runs: \(client.output)")
        XCTAssertNotEqual(status, 0, "\(client.output)")
        XCTAssertTrue(client.output.joined(separator: "\n").contains("castd"), "pyatv names the error domain: \(client.output)")
        kill(takeover.pid, SIGINT)
    }
}
