import Foundation
import XCTest

/// `cast send` in a real terminal (tmux): the status line moves, space pauses the receiver, q stops.
final class InteractiveTests: XCTestCase {
    func testStatusLineAndKeysInARealTerminal() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") else {
            throw XCTSkip("tmux is not installed (scripts/setup installs it)")
        }
        let lab = try Lab("e2i\(getpid() % 100000)")
        defer { lab.tearDown() }
        let work = NSTemporaryDirectory() + "cast-tty-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let receiver = try lab.start(
            on: .box,
            [Paths.castd, "--name", "Living Room", "--auth", "none", "--state-dir", "\(work)/state", "--video-out", "none",
             "--audio-device", "none", "--events", "\(work)/events.jsonl"])
        XCTAssertNotNil(receiver.waitForLine(containing: "advertised as"))
        let clip = try Media.clip("tty.mp4", seconds: 20)
        let socket = "castui\(getpid())"
        func tmux(_ arguments: [String]) throws -> CommandResult {
            // -u and a UTF-8 locale: the status line's symbols must survive capture-pane.
            try lab.run(
                on: .phone, ["tmux", "-u", "-L", socket] + arguments,
                environment: ["XDG_CONFIG_HOME": "\(work)/sender", "LANG": "C.UTF-8", "TERM": "xterm-256color"])
        }
        defer { _ = try? tmux(["kill-server"]) }
        // The tmux server runs in the foreground (-D) as a process of this test: a daemonised
        // server started from a Foundation Process does not survive here.
        let server = try lab.start(
            on: .phone, ["tmux", "-u", "-D", "-L", socket],
            environment: ["XDG_CONFIG_HOME": "\(work)/sender", "LANG": "C.UTF-8", "TERM": "xterm-256color"])
        defer { server.stop() }
        var started = try tmux(["ls"])
        for _ in 0..<50 where started.stderr.contains("no server") {
            Thread.sleep(forTimeInterval: 0.05)
            started = try tmux(["ls"])
        }
        started = try tmux(
            ["new-session", "-d", "-x", "160", "-y", "6", "\(Paths.cast) send '\(clip)' --to 'Living Room'; sleep 30"])
        XCTAssertEqual(started.status, 0, started.stderr)

        func screen() -> String { (try? tmux(["capture-pane", "-p"]).stdout) ?? "" }
        func waitForScreen(_ text: String, timeout: Double = 10) throws -> String? {
            let deadline = Date().addingTimeInterval(timeout)
            repeat {
                let shown = screen()
                if shown.contains(text) { return shown }
                Thread.sleep(forTimeInterval: 0.1)
            } while Date() < deadline
            return nil
        }
        let first = try XCTUnwrap(try waitForScreen("▶ playing  0:01"), "screen: \(screen())")
        XCTAssertTrue(first.contains("/ 0:20"), first)
        XCTAssertTrue(first.contains("tty.mp4"), first)
        let later = try XCTUnwrap(try waitForScreen("▶ playing  0:03"), "the status line did not move: \(screen())")
        XCTAssertTrue(later.contains("[###"), later)

        XCTAssertEqual(try tmux(["send-keys", "Space"]).status, 0)
        XCTAssertNotNil(try waitForScreen("⏸ paused"), screen())
        let events = try String(contentsOfFile: "\(work)/events.jsonl", encoding: .utf8)
        XCTAssertTrue(events.contains(#""state":"paused""#), events)

        XCTAssertEqual(try tmux(["send-keys", "Space"]).status, 0)
        XCTAssertNotNil(try waitForScreen("▶ playing"), screen())
        XCTAssertEqual(try tmux(["send-keys", "q"]).status, 0)
        XCTAssertNotNil(try waitForScreen("finished: userExited"), screen())
        XCTAssertNotNil(receiver.waitForLine(containing: "finished: userExited", timeout: 5), "\(receiver.output)")
    }
}
