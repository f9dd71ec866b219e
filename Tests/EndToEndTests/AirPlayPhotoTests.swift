import CastProtocol
import CastTestSupport
import Foundation
import XCTest

/// AirPlay photos (`PUT /photo`), as an iPhone's Photos app sends them, from a python client on the phone host (the lab
/// has no iPhone), castd `--airplay-video` on the box recording its video output as framemd5: the picture castd shows
/// is FFmpeg's own decode of the JPEG or PNG, decoded by the session's decoder worker, held until `/stop`, replaced by
/// the next; `cacheOnly` keeps one for `displayCached`; what is not a picture gets a 4xx and castd goes on.
final class AirPlayPhotoTests: LabTestCase {
    override class var labPrefix: String { "ph" }

    private static let sessionID = "9F3E5C2A-0000-4000-8000-00000000F070"

    private var receiver: Daemon!
    private var port: UInt16 = 0
    private var phone: PhotoClient!

    /// castd with AirPlay video (and `extra` arguments), and the client on the phone with its connection open.
    private func startReceiverAndClient(extra: [String] = []) throws {
        (receiver, port, _) = try lab.startAirPlayReceiver(work: work, extra: extra)
        phone = try PhotoClient(lab: lab, port: port)
    }

    /// Sends one request on the client's connection and returns castd's answer (`200 OK`, `412 …`).
    private func send(
        _ method: String = "PUT", _ path: String = "/photo", headers: [String: String] = [:], body: String? = nil,
        length: Int? = nil, reverse: String? = nil, line: UInt = #line
    ) throws -> String {
        let answer = try phone.send(method, path, headers: headers, body: body, length: length, reverse: reverse)
        XCTAssertNotNil(answer, "no answer to \(method) \(path): \(receiver.output.suffix(10))", line: line)
        return answer ?? ""
    }

    /// A `PUT /photo` of `picture` in the test's session, with `headers` besides the session ID.
    private func put(
        _ picture: String?, _ headers: [String: String] = [:], length: Int? = nil, line: UInt = #line
    ) throws -> String {
        var all = headers
        all["X-Apple-Session-ID"] = Self.sessionID
        return try send(headers: all, body: picture, length: length, line: line)
    }

    /// A picture made by FFmpeg from `source` (a lavfi graph) into `name` (its extension says the format).
    private func picture(_ name: String, _ source: String) throws -> String {
        let path = "\(work!)/\(name)"
        let made = try runCommand(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", source, "-frames:v", "1", path])
        XCTAssertEqual(made.status, 0, made.stderr)
        return path
    }

    /// What castd's video output holds now (its framemd5 file is opened afresh for each session).
    private func shown() -> [String] {
        Media.comparable((try? String(contentsOfFile: "\(work!)/frames.md5", encoding: .utf8)) ?? "")
    }

    private func events() -> [PlaybackEvent] {
        let text = (try? String(contentsOfFile: "\(work!)/events.jsonl", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap {
            try? JSONDecoder().decode(PlaybackEvent.self, from: Data($0.utf8))
        }
    }

    private func finishes() -> [FinishReason] {
        events().compactMap { if case .finished(let reason, _, _) = $0 { reason } else { nil } }
    }

    /// A JPEG is shown as FFmpeg decodes it, by the session's worker (which holds the framemd5 file open; castd does
    /// not), and stays until another picture replaces it; a PNG cached with `cacheOnly` is not shown until
    /// `displayCached`; an unknown key is 412; `/stop` takes the picture down (`userExited`) and the worker exits.
    func testAPhotoIsShownHeldReplacedCachedAndStopped() throws {
        let first = try picture("first.jpg", "testsrc2=size=640x360")
        let second = try picture("second.jpg", "smptebars=size=480x320")
        let cached = try picture("cached.png", "rgbtestsrc=size=320x240")
        try startReceiverAndClient()
        let castd = try XCTUnwrap(Processes.castd(under: receiver.pid), "no castd under \(receiver.pid)")

        let asked = Date()
        XCTAssertEqual(try put(first), "200 OK", "\(receiver.output.suffix(10))")
        let seconds = Date().timeIntervalSince(asked)
        XCTAssertEqual(shown(), try Media.ffmpegFrameMD5(first))
        print(String(format: "a 640x360 JPEG shown, answered 200 after %.2f s: %@", seconds, shown().last ?? ""))
        // The picture was decoded in the worker that shows it: the worker writes the video output, castd does not.
        let workers = Processes.playingWorkers(of: castd)
        XCTAssertEqual(workers.count, 1, "castd's children: \(Processes.children(of: castd))")
        let worker = try XCTUnwrap(workers.first)
        XCTAssertTrue(openFiles(of: worker).contains("\(work!)/frames.md5"), "\(openFiles(of: worker))")
        XCTAssertFalse(openFiles(of: castd).contains("\(work!)/frames.md5"), "\(openFiles(of: castd))")

        // Held: seconds later it is still on screen, its session unfinished, its worker there.
        Thread.sleep(forTimeInterval: 3)
        XCTAssertEqual(shown(), try Media.ffmpegFrameMD5(first))
        XCTAssertEqual(finishes(), [], "\(receiver.output.suffix(10))")
        XCTAssertEqual(Processes.playingWorkers(of: castd), [worker])

        XCTAssertEqual(try put(second, ["X-Apple-Transition": "Dissolve"]), "200 OK")
        XCTAssertEqual(shown(), try Media.ffmpegFrameMD5(second))

        XCTAssertEqual(try put(cached, ["X-Apple-AssetAction": "cacheOnly", "X-Apple-AssetKey": "K-1"]), "200 OK")
        Thread.sleep(forTimeInterval: 1)
        XCTAssertEqual(shown(), try Media.ffmpegFrameMD5(second), "cacheOnly showed the picture")
        XCTAssertEqual(finishes().count, 1, "cacheOnly ended the picture on screen")
        XCTAssertEqual(
            try put(nil, ["X-Apple-AssetAction": "displayCached", "X-Apple-AssetKey": "K-2"]),
            "412 Precondition Failed")
        XCTAssertEqual(shown(), try Media.ffmpegFrameMD5(second))
        XCTAssertEqual(try put(nil, ["X-Apple-AssetAction": "displayCached", "X-Apple-AssetKey": "K-1"]), "200 OK")
        XCTAssertEqual(shown(), try Media.ffmpegFrameMD5(cached))

        let stopWorker = try XCTUnwrap(Processes.playingWorkers(of: castd).first)
        XCTAssertEqual(try send("POST", "/stop", headers: ["X-Apple-Session-ID": Self.sessionID]), "200 OK")
        XCTAssertTrue(waitUntil(timeout: 10) { finishes().count == 3 }, "\(finishes())")
        // The first two were replaced (interrupted by the next); the last stopped by the client.
        XCTAssertEqual(finishes(), [.playbackError, .playbackError, .userExited])
        XCTAssertTrue(
            waitUntil(timeout: 10) { !Processes.workers(of: castd).contains(stopWorker) }, "the worker did not exit")
    }

    /// What is not a picture is refused with a 4xx and castd goes on serving: a body that does not start as a JPEG or
    /// PNG (415 before anything runs), one that does but does not decode (415 once the worker failed), a missing
    /// session ID (400), a Content-Length over 16 MiB (413, answered before a byte of the body is sent); then a good
    /// picture is shown.
    func testWhatIsNotAPictureIsRefusedAndCastdGoesOn() throws {
        let good = try picture("good.jpg", "testsrc2=size=640x360")
        let text = "\(work!)/text.jpg"
        try Data("this is not a picture\n".utf8).write(to: URL(fileURLWithPath: text))
        let broken = "\(work!)/broken.jpg"
        // A JPEG's first bytes, then nothing a decoder can use.
        try Data([0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 0, count: 4000)).write(to: URL(fileURLWithPath: broken))
        try startReceiverAndClient()

        XCTAssertEqual(try put(text), "415 Unsupported Media Type")
        XCTAssertEqual(try put(broken), "415 Unsupported Media Type", "\(receiver.output.suffix(10))")
        XCTAssertEqual(try send(headers: [:], body: good), "400 Bad Request")
        XCTAssertEqual(try put(good), "200 OK", "\(receiver.output.suffix(10))")
        XCTAssertEqual(shown(), try Media.ffmpegFrameMD5(good))
        // The answer comes with nothing of the body sent: castd refuses by the head, and closes.
        XCTAssertEqual(
            try put(nil, ["Content-Type": "image/jpeg"], length: 16 << 20 + 1), "413 Content Too Large")
        XCTAssertTrue(receiver.isRunning, "\(receiver.output.suffix(10))")
    }

    /// A photo is a session like any other: a Cast sender's `send` takes the receiver over from it (the photo finishes
    /// `playbackError`, the film plays to its end), and the client's own `/play` replaces the next photo it shows.
    func testACastSenderOrAPlayTakesThePhotoDown() throws {
        let photo = try picture("photo.jpg", "testsrc2=size=640x360")
        let clip = try Media.clip("photo-takeover.mp4", seconds: 2)
        try startReceiverAndClient()
        XCTAssertEqual(try put(photo), "200 OK")
        let sender = try lab.start(
            on: .phone, [Paths.cast, "send", clip, "--to", "Living Room", "--json"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        XCTAssertEqual(sender.waitForExit(timeout: 30), 0, "\(sender.output.suffix(5))")
        XCTAssertEqual(finishes(), [.playbackError, .playbackEnded], "\(receiver.output.suffix(10))")
        XCTAssertEqual(shown(), try Media.ffmpegFrameMD5(clip))

        XCTAssertEqual(try put(photo), "200 OK", "castd shows photos after a send")
        XCTAssertEqual(shown(), try Media.ffmpegFrameMD5(photo))
        let url = try lab.serveOnPhone() + "/" + URL(fileURLWithPath: clip).lastPathComponent
        let body = "\(work!)/play.txt"
        try Data("Content-Location: \(url)\nStart-Position: 0\n".utf8).write(to: URL(fileURLWithPath: body))
        XCTAssertEqual(
            try send(
                "POST", "/play", headers: ["Content-Type": "text/parameters", "X-Apple-Session-ID": Self.sessionID],
                body: body), "200 OK")
        XCTAssertTrue(waitUntil(timeout: 30) { finishes().count == 4 }, "\(finishes()) \(receiver.output.suffix(10))")
        XCTAssertEqual(finishes(), [.playbackError, .playbackEnded, .playbackError, .playbackEnded])
    }

    /// A picture over a slow link takes longer than the request's 10 s: it is waited for while its body keeps coming
    /// at 128 KiB/s or faster (a second more for every 128 KiB that arrived: 2.5 MiB at 160 KiB/s, 16 s, is shown);
    /// a body that trickles in slower (8 KiB/s) is cut off with `408` at about 10.7 s, nothing shown.
    func testASlowPictureIsWaitedForWhileItKeepsComing() throws {
        let slow = try picture("slow.png", "color=size=1280x960,noise=alls=100:allf=t")
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: slow)[.size] as? Int)
        XCTAssertGreaterThan(size, 12 * 160 * 1024, "the picture takes longer than the 10 s at 160 KiB/s")
        try startReceiverAndClient()
        let began = Date()
        let trickled = try phone.send(headers: ["X-Apple-Session-ID": Self.sessionID], body: slow, pace: 8 * 1024)
        let waited = Date().timeIntervalSince(began)
        XCTAssertTrue(["408 Request Timeout", "closed"].contains(trickled), "\(String(describing: trickled))")
        XCTAssertTrue(waited < 30, "cut off after \(waited) s")
        XCTAssertNotNil(
            receiver.waitForLine(containing: "no whole request within"), "\(receiver.output.suffix(5))")
        XCTAssertEqual(events(), [], "nothing was shown")

        phone = try PhotoClient(lab: lab, port: port)
        XCTAssertEqual(
            try phone.send(headers: ["X-Apple-Session-ID": Self.sessionID], body: slow, pace: 160 * 1024), "200 OK",
            "\(receiver.output.suffix(5))")
        XCTAssertEqual(shown(), try Media.ffmpegFrameMD5(slow))
    }

    /// Under `--takeover deny` an AirPlay client is its session, not one connection: a picture sent on a second
    /// connection naming the session shown replaces it (an iPhone asks on several), one naming another session is
    /// refused `503` and nothing changes; the picture is the connection's that sent it, and stays when the first
    /// connection closes, goes when its own does.
    func testUnderDenyTheSessionShownMayReplaceItsPictureFromAnotherConnection() throws {
        let first = try picture("first.jpg", "testsrc2=size=640x360")
        let second = try picture("second.png", "smptebars=size=640x360")
        try startReceiverAndClient(extra: ["--takeover", "deny"])
        XCTAssertEqual(try put(first), "200 OK")
        let again = try PhotoClient(lab: lab, port: port)
        defer { again.daemon.stop() }
        XCTAssertEqual(
            try again.send(headers: ["X-Apple-Session-ID": Self.sessionID], body: second), "200 OK",
            "\(receiver.output.suffix(10))")
        XCTAssertEqual(shown(), try Media.ffmpegFrameMD5(second))
        let stranger = try PhotoClient(lab: lab, port: port)
        defer { stranger.daemon.stop() }
        XCTAssertEqual(
            try stranger.send(headers: ["X-Apple-Session-ID": "0E1D2C3B-0000-4000-8000-00000000BAD0"], body: first),
            "503 Service Unavailable")
        XCTAssertEqual(shown(), try Media.ffmpegFrameMD5(second))
        XCTAssertEqual(finishes(), [.playbackError], "only the first picture was replaced: \(events())")

        phone.daemon.stop()
        Thread.sleep(forTimeInterval: 1)
        XCTAssertEqual(finishes(), [.playbackError], "the first connection's close took the picture down: \(events())")
        again.daemon.stop()
        XCTAssertTrue(waitUntil(timeout: 10) { finishes().count == 2 }, "\(events())")
        XCTAssertEqual(finishes(), [.playbackError, .playbackError])
    }

    /// With decoder isolation off (debugging), castd decodes the picture itself, as it does every session's media then,
    /// and holds it the same way.
    func testWithoutIsolationCastdShowsThePictureItself() throws {
        let photo = try picture("photo.png", "testsrc2=size=640x360")
        try startReceiverAndClient(extra: ["--decoder-isolation", "off"])
        XCTAssertEqual(try put(photo), "200 OK", "\(receiver.output.suffix(10))")
        XCTAssertEqual(shown(), try Media.ffmpegFrameMD5(photo))
        let castd = try XCTUnwrap(Processes.castd(under: receiver.pid), "no castd under \(receiver.pid)")
        XCTAssertTrue(openFiles(of: castd).contains("\(work!)/frames.md5"), "\(openFiles(of: castd))")
        Thread.sleep(forTimeInterval: 2)
        XCTAssertEqual(finishes(), [], "the picture did not stay: \(events())")
        XCTAssertEqual(try send("POST", "/stop", headers: ["X-Apple-Session-ID": Self.sessionID]), "200 OK")
        XCTAssertTrue(waitUntil(timeout: 10) { finishes() == [.userExited] }, "\(finishes())")
    }

    /// An event channel for the session hears the picture as a `photo`: `playing` once it is on screen, `stopped`
    /// with the reason when `/stop` takes it down.
    func testTheEventChannelHearsThePhotoShownAndStopped() throws {
        let photo = try picture("photo.jpg", "testsrc2=size=640x360")
        try startReceiverAndClient()
        XCTAssertEqual(try send(headers: [:], reverse: Self.sessionID), "101 Switching Protocols")
        XCTAssertEqual(try put(photo), "200 OK")
        XCTAssertNotNil(phone.waitForLine(containing: "event photo playing", timeout: 20), "\(phone.output)")
        XCTAssertEqual(try send("POST", "/stop", headers: ["X-Apple-Session-ID": Self.sessionID]), "200 OK")
        XCTAssertNotNil(phone.waitForLine(containing: "event photo stopped stopped", timeout: 20), "\(phone.output)")
        // A stall or the wait before the picture may say loading; nothing says video.
        let events = phone.output.filter { $0.hasPrefix("event ") && !$0.contains(" loading ") }
        XCTAssertEqual(events, ["event photo playing -", "event photo stopped stopped"])
    }

    /// Large bodies arriving at once are bounded (64 MiB in all): four connections each sending a 16 MiB picture are
    /// waited for, a fifth is refused `503` at once and closed; once the four have gone, a picture is waited for again.
    func testPicturesArrivingAtOnceAreBounded() throws {
        try startReceiverAndClient()
        let script = """
            import socket, sys, time
            host, port = sys.argv[1], int(sys.argv[2])
            head = (b"PUT /photo HTTP/1.1\\r\\nX-Apple-Session-ID: S\\r\\nContent-Length: 16777216\\r\\n\\r\\n"
                + b"\\xff\\xd8\\xff" + bytes(40000))
            def waiting(s):
                s.settimeout(1.5)
                try:
                    return "answered " + s.recv(200).split(b"\\r\\n")[0].decode()
                except socket.timeout:
                    return "waiting"
            held = []
            for i in range(4):
                s = socket.create_connection((host, port), timeout=10)
                s.sendall(head)
                held.append(s)
            time.sleep(1)
            fifth = socket.create_connection((host, port), timeout=10)
            fifth.sendall(head)
            print("fifth:", waiting(fifth))
            print("held:", " ".join(waiting(s) for s in held))
            for s in held: s.close()
            time.sleep(2)
            again = socket.create_connection((host, port), timeout=10)
            again.sendall(head)
            print("again:", waiting(again))
            """
        let result = try runCommand(
            [Paths.lab, "exec", lab.name, "phone", "python3", "-c", script, lab.address(.box), String(port)],
            timeout: 60)
        print(result.stdout)
        XCTAssertTrue(
            result.stdout.contains("fifth: answered HTTP/1.1 503 Service Unavailable"),
            "\(result.stdout)\(result.stderr)")
        XCTAssertTrue(result.stdout.contains("held: waiting waiting waiting waiting"), result.stdout)
        XCTAssertTrue(result.stdout.contains("again: waiting"), "\(result.stdout)\(receiver.output.suffix(8))")
        XCTAssertTrue(receiver.isRunning)
    }

    /// The paths a process has open (its /proc fd links).
    private func openFiles(of pid: Int32) -> [String] {
        let folder = "/proc/\(pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\($0)") }
    }
}
