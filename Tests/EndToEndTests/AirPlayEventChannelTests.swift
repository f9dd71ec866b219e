import Foundation
import XCTest

/// An AirPlay client's event channel, as iOS opens it: `POST /reverse` (PTTH/1.0) on a connection of its own before
/// its `/play`, then castd's `POST /event` requests on it as the session's state changes, each answered by the client.
/// The client is a python program on the phone host (the lab has no iPhone), castd `--airplay-video` on the box.
final class AirPlayEventChannelTests: LabTestCase {
    override class var labPrefix: String { "e2ev" }

    /// Plays a 4 s clip from the phone's server with the session ID the reverse connection named, pauses it once
    /// playing, resumes it, makes it play twice as fast, and lets it end: the events arrive in that order, each a
    /// `POST /event` of an XML property list, and the channel is closed by nobody before the end. (Twice as fast, the
    /// sandboxed worker opens libavfilter for the tempo: a worker that could not would end with `error`.)
    /// What both clients share (python3 on the phone: the lab has no curl): the arguments (castd's address and AirPlay
    /// port, the URL), the session ID, a head read from a file (its first line and `Content-Length`), one request
    /// and its answer on a control connection of its own, and the `/play` of the URL in that session.
    private static let client = """
        import socket, sys, threading, time
        host, port, url = sys.argv[1], int(sys.argv[2]), sys.argv[3]
        sid = "9F3E5C2A-0000-4000-8000-00000000AB01"
        printing = threading.Lock()
        def say(*words):
            with printing:
                sys.stdout.write(" ".join(str(w) for w in words) + "\\n")
                sys.stdout.flush()
        def read_head(f):
            first, length = f.readline().decode().strip(), 0
            while True:
                header = f.readline().decode().strip()
                if not header: return first, length
                if header.lower().startswith("content-length:"): length = int(header.split(":")[1])
        c = socket.create_connection((host, port), timeout=40)
        cf = c.makefile("rb")
        def request(head, body=b""):
            c.sendall(head.encode() + body)
            status, length = read_head(cf)
            return status, cf.read(length)
        def play():
            body = ("Content-Location: %s\\nStart-Position: 0\\n" % url).encode()
            return request("POST /play HTTP/1.1\\r\\nContent-Type: text/parameters\\r\\n"
                "X-Apple-Session-ID: %s\\r\\nContent-Length: %d\\r\\n\\r\\n" % (sid, len(body)), body)[0]

        """

    /// castd with AirPlay video on a free port, and the URL of a `seconds` clip served from the phone.
    private func startReceiverAndServe(seconds: Int) throws -> (receiver: Daemon, port: UInt16, url: String) {
        let clip = try Media.clip("events-\(seconds).mp4", seconds: seconds)
        let (receiver, port, _) = try lab.startAirPlayReceiver(work: work)
        let url = try lab.serveOnPhone() + "/" + URL(fileURLWithPath: clip).lastPathComponent
        return (receiver, port, url)
    }

    func testTheReverseConnectionHearsPlayingPausedAndTheEnd() throws {
        let (receiver, port, url) = try startReceiverAndServe(seconds: 4)
        let script =
            Self.client + """
                r = socket.create_connection((host, port), timeout=40)
                r.sendall(("POST /reverse HTTP/1.1\\r\\nUpgrade: PTTH/1.0\\r\\nConnection: Upgrade\\r\\n"
                    "X-Apple-Purpose: event\\r\\nX-Apple-Session-ID: %s\\r\\nContent-Length: 0\\r\\n\\r\\n" % sid).encode())
                rf = r.makefile("rb")
                say("reverse:", read_head(rf)[0])
                states = []
                def events():
                    while True:
                        line, length = read_head(rf)
                        if not line:
                            say("closed"); return
                        body = rf.read(length).decode()
                        state = body.split("<key>state</key><string>")[1].split("<")[0]
                        reason = body.split("<key>reason</key><string>")[1].split("<")[0] if "reason" in body else "-"
                        say("event:", line, state, reason)
                        states.append(state)
                        r.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 0\\r\\n\\r\\n")
                        if state == "stopped": return
                listener = threading.Thread(target=events); listener.start()
                def wait_for(state, count):
                    deadline = time.monotonic() + 20
                    while states.count(state) < count and time.monotonic() < deadline: time.sleep(0.05)
                say("play:", play())
                wait_for("playing", 1)
                say("pause:", request("POST /rate?value=0 HTTP/1.1\\r\\nX-Apple-Session-ID: %s\\r\\n\\r\\n" % sid)[0])
                wait_for("paused", 1)
                say("resume:", request("POST /rate?value=1 HTTP/1.1\\r\\nX-Apple-Session-ID: %s\\r\\n\\r\\n" % sid)[0])
                wait_for("playing", 2)
                say("faster:", request("POST /rate?value=2 HTTP/1.1\\r\\nX-Apple-Session-ID: %s\\r\\n\\r\\n" % sid)[0])
                listener.join(30)
                say("done")
                """
        let result = try runCommand(
            [Paths.lab, "exec", lab.name, "phone", "python3", "-c", script, lab.address(.box), String(port), url],
            timeout: 90)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "reverse: HTTP/1.1 101 Switching Protocols", "\(result.stdout)\(result.stderr)")
        let events = lines.filter { $0.hasPrefix("event: ") }
        XCTAssertTrue(events.allSatisfy { $0.hasPrefix("event: POST /event HTTP/1.1 ") }, "\(events)")
        // A stall or the wait before the first frame may say loading; the rest is the order the client caused.
        let states = events.map { $0.split(separator: " ").suffix(2).joined(separator: " ") }.filter {
            !$0.hasPrefix("loading")
        }
        XCTAssertEqual(
            states, ["playing -", "paused -", "playing -", "stopped ended"],
            "\(result.stdout)\(result.stderr)\n\(receiver.output.suffix(12))")
        XCTAssertTrue(lines.contains("faster: HTTP/1.1 200 OK"), "\(result.stdout)")
        XCTAssertFalse(lines.contains("closed"), "castd closed the channel: \(result.stdout)")
        XCTAssertTrue(lines.contains("done"), "\(result.stdout)\(result.stderr)")
        XCTAssertNotNil(
            receiver.output.first { $0.contains("listens for the events of session 9F3E5C2A") }, "\(receiver.output)")
    }

    /// A client that turns a connection around and then never reads or answers (a stranger holding a channel open)
    /// holds up nothing: its session plays to the end (the other connection's `/playback-info` says so), and castd
    /// ends the channel, once the event it sent was not answered within 10 s, with a word in its log.
    func testAChannelThatNeverAnswersHoldsUpNothing() throws {
        let (receiver, port, url) = try startReceiverAndServe(seconds: 3)
        let script =
            Self.client + """
                r = socket.create_connection((host, port), timeout=40)
                r.sendall(("POST /reverse HTTP/1.1\\r\\nUpgrade: PTTH/1.0\\r\\nX-Apple-Session-ID: %s\\r\\n\\r\\n" % sid).encode())
                say("play:", play())
                seen, deadline = False, time.monotonic() + 30
                while time.monotonic() < deadline:
                    _, info = request("GET /playback-info HTTP/1.1\\r\\nX-Apple-Session-ID: %s\\r\\n\\r\\n" % sid)
                    if b"duration" in info: seen = True
                    elif seen:
                        say("ended"); break
                    time.sleep(0.2)
                """
        let started = Date()
        let result = try runCommand(
            [Paths.lab, "exec", lab.name, "phone", "python3", "-c", script, lab.address(.box), String(port), url],
            timeout: 60)
        XCTAssertTrue(result.stdout.contains("play: HTTP/1.1 200 OK"), "\(result.stdout)\(result.stderr)")
        XCTAssertTrue(result.stdout.contains("ended"), "\(result.stdout)\(result.stderr)\n\(receiver.output)")
        XCTAssertLessThan(Date().timeIntervalSince(started), 30, "the session was held up")
        XCTAssertNotNil(
            receiver.waitForLine(containing: "event channel ended", timeout: 20), "\(receiver.output.suffix(10))")
        XCTAssertNotNil(receiver.output.first { $0.contains("finished: playbackEnded") }, "\(receiver.output)")
    }
}
