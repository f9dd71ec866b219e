import Foundation
import XCTest

/// Names from the network are logged with their control characters escaped (issue #13): a sender that pairs under a
/// name holding a newline, a forged `Pairing PIN:` line and a terminal escape cannot add a line to castd's output or
/// reach the terminal that shows it.
final class NetworkTextTests: LabTestCase {
    override class var labPrefix: String { "e2txt" }

    func testAPairingNameCannotForgeAPINLineOrATerminalEscape() throws {
        let receiver = try lab.start(
            on: .box,
            [
                Paths.castd, "--name", "Living Room", "--port", "7100", "--state-dir", "\(work!)/state", "--video-out",
                "none", "--audio-device", "none",
            ])
        XCTAssertNotNil(receiver.waitForLine(containing: "advertised as"), "\(receiver.output)")
        // The sender's name is USER@HOST: the user name carries the attack.
        let forged = "eve\nPairing PIN: 1234\u{1B}[2J\u{1B}]0;owned\u{7}"
        let pair = try lab.start(
            on: .phone, [Paths.cast, "pair", "Living Room"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender", "USER": forged], interactive: true)
        let line = try XCTUnwrap(receiver.waitForLine(containing: "Pairing PIN: ", timeout: 10), "\(receiver.output)")
        pair.type(String(line.split(separator: " ").last ?? ""))
        XCTAssertEqual(pair.waitForExit(timeout: 20), 0, "\(pair.output)")
        XCTAssertNotNil(receiver.waitForLine(containing: "paired with", timeout: 5), "\(receiver.output)")

        let output = receiver.output
        let escaped = #"eve\nPairing PIN: 1234\u{1B}[2J\u{1B}]0;owned\u{7}@"#
        XCTAssertEqual(output.filter { $0.contains("Pairing PIN:") && !$0.contains(escaped) }.count, 1, "\(output)")
        XCTAssertTrue(
            output.contains { $0.contains("castd: \"\(escaped)") && $0.contains("asks to pair") }, "\(output)")
        XCTAssertTrue(output.contains { $0.contains("paired with \"\(escaped)") }, "\(output)")
        XCTAssertFalse(output.contains { $0.unicodeScalars.contains { $0.properties.generalCategory == .control } })

        // The list of paired senders shows it on one line, escaped the same way.
        let list = try lab.run(on: .box, [Paths.castd, "--list-paired", "--state-dir", "\(work!)/state"])
        XCTAssertEqual(list.stdout.split(separator: "\n").count, 1, list.stdout)
        XCTAssertTrue(list.stdout.contains(escaped), list.stdout)
    }
}
