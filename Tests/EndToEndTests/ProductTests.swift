import Foundation
import XCTest

/// The programs as a user meets them: help, spelling mistakes, the config file, SIGHUP, systemd.
final class ProductTests: XCTestCase {
    func testHelpAndSpellingMistakes() throws {
        let help = try runCommand([Paths.cast, "--help"])
        XCTAssertEqual(help.status, 0)
        for verb in ["list", "send", "status", "pair", "unpair", "pause", "resume", "stop"] {
            XCTAssertTrue(help.stdout.contains("\n  \(verb) "), "\(verb) missing from:\n\(help.stdout)")
        }
        let pause = try runCommand([Paths.cast, "pause", "--help"])
        XCTAssertEqual(pause.status, 0)
        XCTAssertEqual(
            pause.stdout,
            """
            usage: cast pause NAME

            Pause what plays on a receiver.

            options:
              --timeout SEC     how long to look for receivers (default 2)
              --help            show this help

            examples:
              cast pause "Living Room"

            """)
        let verb = try runCommand([Paths.cast, "stauts", "x"])
        XCTAssertEqual(verb.status, 2)
        XCTAssertEqual(verb.stderr, "cast: unknown verb 'stauts'; did you mean 'status'? (see cast --help)\n")
        let flag = try runCommand([Paths.cast, "send", "a.mp4", "--jsno"])
        XCTAssertEqual(flag.status, 2)
        XCTAssertEqual(flag.stderr, "cast send: unknown option '--jsno'; did you mean '--json'? (see cast send --help)\n")
        let castdFlag = try runCommand([Paths.castd, "--prot", "7"])
        XCTAssertEqual(castdFlag.status, 2)
        XCTAssertTrue(castdFlag.stderr.contains("did you mean '--port'?"), castdFlag.stderr)
        let castdHelp = try runCommand([Paths.castd, "--help"])
        XCTAssertEqual(castdHelp.status, 0)
        XCTAssertTrue(castdHelp.stdout.hasPrefix("usage: castd "), castdHelp.stdout)
    }

    func testCastdListsTheAudioDevicesALSAOffers() throws {
        // With the system's ALSA configuration (not the tests' capture one): at least `null` exists.
        let result = try runCommand(["env", "-u", "ALSA_CONFIG_PATH", Paths.castd, "--list-audio-devices"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.split(separator: "\n").contains("null"), result.stdout)
        XCTAssertTrue(result.stdout.contains("    Discard all samples"), result.stdout)
    }

    func testSystemdAcceptsTheUnitFile() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") else {
            throw XCTSkip("systemd-analyze is not installed (scripts/setup installs it)")
        }
        let unit = try String(contentsOf: Paths.package.appendingPathComponent("Receiver/castd.service"), encoding: .utf8)
        XCTAssertTrue(unit.contains("Restart=on-failure"))
        XCTAssertTrue(unit.contains("ExecReload=/bin/kill -HUP $MAINPID"))
        // verify checks that ExecStart exists: point it at the built binary.
        let path = NSTemporaryDirectory() + "castd-\(getpid()).service"
        try unit.replacingOccurrences(of: "/usr/local/bin/castd", with: Paths.castd)
            .write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let verify = try runCommand(["systemd-analyze", "verify", path], timeout: 60)
        XCTAssertEqual(verify.status, 0, verify.stderr)
        XCTAssertEqual(verify.stderr, "", "systemd-analyze complained")
    }

    func testConfigFileFlagsWinAndSIGHUPRenames() throws {
        let lab = try Lab("e2c\(getpid() % 100000)")
        defer { lab.tearDown() }
        let work = NSTemporaryDirectory() + "cast-config-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let config = "\(work)/castd.conf"
        try "# the attic box\nname = Attic\nport = 7200\nauth = none\nvideo-out = none\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        let receiver = try lab.start(
            on: .box, [Paths.castd, "--config", config, "--port", "7100", "--state-dir", "\(work)/state", "--audio-device", "none"])
        XCTAssertNotNil(receiver.waitForLine(containing: "listening on port 7100"), "flag must win: \(receiver.output)")
        XCTAssertNotNil(receiver.waitForLine(containing: "advertised as \"Attic\""), "\(receiver.output)")

        try "name = Cellar\nport = 7200\nauth = none\nvideo-out = none\n".write(toFile: config, atomically: true, encoding: .utf8)
        kill(receiver.pid, SIGHUP)
        XCTAssertNotNil(receiver.waitForLine(containing: "advertised as \"Cellar\""), "\(receiver.output)")
        var names: [String] = []
        let deadline = Date().addingTimeInterval(5)
        repeat {
            let list = try lab.run(on: .phone, [Paths.cast, "list", "--json"], environment: ["XDG_CONFIG_HOME": "\(work)/sender"])
            let entries = (try? JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]]) ?? []
            names = entries.compactMap { $0["name"] as? String }
        } while names != ["Cellar"] && Date() < deadline
        XCTAssertEqual(names, ["Cellar"])
        XCTAssertTrue(receiver.isRunning)

        // A broken config on SIGHUP is reported and changes nothing.
        try "name = Cellar\nthis is not a setting\n".write(toFile: config, atomically: true, encoding: .utf8)
        kill(receiver.pid, SIGHUP)
        XCTAssertNotNil(receiver.waitForLine(containing: "keeping the running configuration"), "\(receiver.output)")
        XCTAssertTrue(receiver.isRunning)
    }
}
