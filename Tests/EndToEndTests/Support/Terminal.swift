import Foundation
import XCTest

/// A real terminal on a lab host: a tmux server of the test's own (in the foreground, `-D`, as a process of the
/// test: a daemonised server started from a Foundation Process does not survive here), one session running a
/// command, keys sent with send-keys and the screen read with capture-pane. `-u` and a UTF-8 locale keep the
/// status line's symbols intact. Ends (server killed by pid) in `close()`.
final class TerminalSession {
    private let lab: Lab
    private let host: Lab.Host
    private let socket: String
    private let environment: [String: String]
    private let server: Daemon

    /// Starts tmux on `host` and `command` (a shell command line) in a 160×6 session.
    init(lab: Lab, on host: Lab.Host, command: String, environment: [String: String] = [:]) throws {
        self.lab = lab
        self.host = host
        socket = "cast\(getpid())\(UInt32.random(in: 0...UInt32.max))"
        self.environment = environment.merging(["LANG": "C.UTF-8", "TERM": "xterm-256color"]) { given, _ in given }
        server = try lab.start(on: host, ["tmux", "-u", "-D", "-L", socket], environment: self.environment)
        var listed = try tmux(["ls"])
        // A loaded machine can take seconds to start it; a new-session sent before it listens starts a daemon of its
        // own, which holds the command's pipe open.
        for _ in 0..<400 where listed.stderr.contains("no server") || listed.stderr.contains("error connecting") {
            Thread.sleep(forTimeInterval: 0.05)
            listed = try tmux(["ls"])
        }
        let started = try tmux(["new-session", "-d", "-x", "160", "-y", "6", command])
        XCTAssertEqual(started.status, 0, started.stderr)
    }

    /// Runs a tmux client command against this server.
    @discardableResult
    func tmux(_ arguments: [String]) throws -> CommandResult {
        try lab.run(on: host, ["tmux", "-u", "-L", socket] + arguments, environment: environment)
    }

    /// Sends one key (tmux's names: `Space`, `q`, `Left`, …); whether tmux took it.
    func press(_ key: String) -> Bool { (try? tmux(["send-keys", key]).status) == 0 }

    /// What the terminal shows now.
    var screen: String { (try? tmux(["capture-pane", "-p"]).stdout) ?? "" }

    /// Waits until the screen shows `text`; the screen then, or nil after `timeout` seconds.
    func waitFor(_ text: String, timeout: Double = 10) -> String? {
        waitFor(timeout: timeout) { $0.contains(text) }
    }

    /// Waits until a line of the screen shows every one of `parts`, in order (the status line has fields that
    /// come and go between them, such as `buf 11s`); the screen then, or nil after `timeout` seconds.
    func waitFor(line parts: [String], timeout: Double = 10) -> String? {
        waitFor(timeout: timeout) { screen in
            screen.split(separator: "\n").contains { line in
                var rest = Substring(line)
                for part in parts {
                    guard let found = rest.range(of: part) else { return false }
                    rest = rest[found.upperBound...]
                }
                return true
            }
        }
    }

    /// Waits until the screen satisfies `matches`; the screen then, or nil after `timeout` seconds.
    func waitFor(timeout: Double = 10, where matches: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            let shown = screen
            if matches(shown) { return shown }
            Thread.sleep(forTimeInterval: 0.1)
        } while Date() < deadline
        return nil
    }

    func close() {
        _ = try? tmux(["kill-server"])
        server.stop()
    }
}
