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
            [
                Paths.castd, "--name", "Living Room", "--auth", "none", "--state-dir", "\(work)/state", "--video-out",
                "none",
                "--audio-device", "none", "--events", "\(work)/events.jsonl",
            ])
        XCTAssertNotNil(receiver.waitForLine(containing: "advertised as"))
        let clip = try Media.clip("tty.mp4", seconds: 20)
        let terminal = try TerminalSession(
            lab: lab, on: .phone, command: "\(Paths.cast) send '\(clip)' --to 'Living Room'; sleep 30",
            environment: ["XDG_CONFIG_HOME": "\(work)/sender"])
        defer { terminal.close() }
        let first = try XCTUnwrap(terminal.waitFor(line: ["▶ playing", "0:01 /"]), "screen: \(terminal.screen)")
        XCTAssertTrue(first.contains("/ 0:20"), first)
        XCTAssertTrue(first.contains("tty.mp4"), first)
        let later = try XCTUnwrap(
            terminal.waitFor(line: ["▶ playing", "0:03 /"]), "the status line did not move: \(terminal.screen)")
        XCTAssertTrue(later.contains("[###"), later)

        XCTAssertTrue(terminal.press("Space"))
        XCTAssertNotNil(terminal.waitFor("⏸ paused"), terminal.screen)
        let events = try String(contentsOfFile: "\(work)/events.jsonl", encoding: .utf8)
        XCTAssertTrue(events.contains(#""state":"paused""#), events)

        XCTAssertTrue(terminal.press("Space"))
        XCTAssertNotNil(terminal.waitFor("▶ playing"), terminal.screen)
        XCTAssertTrue(terminal.press("q"))
        XCTAssertNotNil(terminal.waitFor("finished: userExited"), terminal.screen)
        XCTAssertNotNil(receiver.waitForLine(containing: "finished: userExited", timeout: 5), "\(receiver.output)")
    }
}
