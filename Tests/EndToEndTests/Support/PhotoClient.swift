import CastTestSupport
import Foundation
import XCTest

/// An AirPlay photo client on the phone host (python3: the lab has no iPhone), for the photo tests.
final class PhotoClient {
    /// One connection, kept open (castd takes a picture down when the connection that showed it closes, as it stops a
    /// video): each line of standard input is a request as JSON (`method`, `path`, `headers`, `body`: a file whose
    /// bytes are sent, `length`: a Content-Length sent without a body, `pace`: the body's bytes a second, sent a tenth
    /// at a time), each answer printed as `answer CODE REASON` (`answer closed` when castd closed the connection).
    /// `{"reverse": SESSION}` opens an event channel on a connection of its own (`POST /reverse`), whose events are
    /// printed as `event CATEGORY STATE REASON` and answered.
    static let script = """
        import json, socket, sys, threading, time
        host, port = sys.argv[1], int(sys.argv[2])
        c = socket.create_connection((host, port), timeout=60)
        printing = threading.Lock()
        def say(*words):
            # One whole line at a time: print() writes its words and the newline apart, and the event listener's
            # thread and this one would interleave them ("answerevent photo playing -" hid an answer once).
            with printing:
                sys.stdout.write(" ".join(words) + "\\n")
                sys.stdout.flush()
        f = c.makefile("rb")
        def read_head(stream):
            first, length = stream.readline().decode().strip(), 0
            while True:
                header = stream.readline().decode().strip()
                if not header: return first, length
                if header.lower().startswith("content-length:"): length = int(header.split(":")[1])
        def listen(r, rf):
            while True:
                line, length = read_head(rf)
                if not line: return
                body = rf.read(length).decode()
                word = lambda key: body.split("<key>%s</key><string>" % key)[1].split("<")[0] if key in body else "-"
                say("event", word("category"), word("state"), word("reason"))
                r.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 0\\r\\n\\r\\n")
        for line in sys.stdin:
            step = json.loads(line)
            if "reverse" in step:
                r = socket.create_connection((host, port), timeout=None)
                r.sendall(("POST /reverse HTTP/1.1\\r\\nUpgrade: PTTH/1.0\\r\\nConnection: Upgrade\\r\\n"
                    "X-Apple-Purpose: event\\r\\nX-Apple-Session-ID: %s\\r\\nContent-Length: 0\\r\\n\\r\\n"
                    % step["reverse"]).encode())
                rf = r.makefile("rb")
                say("answer", read_head(rf)[0].split(" ", 1)[1])
                threading.Thread(target=listen, args=(r, rf), daemon=True).start()
                continue
            body = open(step["body"], "rb").read() if step.get("body") else b""
            length = step.get("length", len(body))
            head = "%s %s HTTP/1.1\\r\\n" % (step["method"], step["path"])
            for name, value in step.get("headers", {}).items(): head += "%s: %s\\r\\n" % (name, value)
            pace = step.get("pace")
            try:
                c.sendall((head + "Content-Length: %d\\r\\n\\r\\n" % length).encode() + (b"" if pace else body))
                for start in range(0, len(body) if pace else 0, max(1, (pace or 1) // 10)):
                    c.sendall(body[start:start + max(1, pace // 10)])
                    time.sleep(0.1)
            except OSError:
                pass
            try:
                status = f.readline().decode().strip()
            except OSError:
                status = ""
            answer_length = 0
            while status:
                header = f.readline().decode().strip()
                if not header: break
                if header.lower().startswith("content-length:"): answer_length = int(header.split(":")[1])
            f.read(answer_length)
            say("answer", status.split(" ", 1)[1] if status else "closed")
        """

    /// The client's process; its output holds the answers and events.
    let daemon: Daemon

    /// Connects to castd's AirPlay port `port` on the box, from the phone.
    init(lab: Lab, port: UInt16) throws {
        daemon = try lab.start(
            on: .phone, ["python3", "-c", Self.script, lab.address(.box), String(port)], interactive: true)
    }

    var output: [String] { daemon.output }

    /// Waits until a line contains `text`; returns it, or nil after `timeout` seconds.
    func waitForLine(containing text: String, timeout: Double) -> String? {
        daemon.waitForLine(containing: text, timeout: timeout)
    }

    /// Sends one request (`body`: a file whose bytes are sent; `length`: a Content-Length sent without a body; `pace`:
    /// the body's bytes a second), or opens
    /// an event channel for session `reverse`, and returns castd's answer (`200 OK`, `412 Precondition Failed`, …);
    /// nil when none came within 40 s (generous: the worker of a loaded machine may take seconds to show a picture).
    func send(
        _ method: String = "PUT", _ path: String = "/photo", headers: [String: String] = [:], body: String? = nil,
        length: Int? = nil, pace: Int? = nil, reverse: String? = nil
    ) throws -> String? {
        var step: [String: Any] = ["method": method, "path": path, "headers": headers]
        if let body { step["body"] = body }
        if let pace { step["pace"] = pace }
        if let length { step["length"] = length }
        if let reverse { step = ["reverse": reverse] }
        let json = String(decoding: try JSONSerialization.data(withJSONObject: step), as: UTF8.self)
        func answers() -> [String] { daemon.output.filter { $0.hasPrefix("answer ") } }
        let before = answers().count
        daemon.type(json)
        guard waitUntil(timeout: 40, { answers().count > before }) else { return nil }
        return String(answers()[before].dropFirst("answer ".count))
    }
}
