import Foundation
import XCTest

/// `--auth password`: the same SRP pairing as with a PIN, but with a fixed secret from a file (for boxes
/// without a screen). castd on the box, `cast` on the phone.
final class PasswordModeTests: XCTestCase {
    private var lab: Lab?
    private var work: String!

    override func setUpWithError() throws {
        work = NSTemporaryDirectory() + "cast-password-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
    }

    override func tearDown() {
        lab?.tearDown()
        if let work { try? FileManager.default.removeItem(atPath: work) }
    }

    func testPairingWithThePasswordFromAFile() throws {
        let start = Date()
        let lab = try Lab("e2w\(getpid() % 100000)")
        self.lab = lab
        let passwordFile = "\(work!)/password"
        try Data("correct horse\n".utf8).write(to: URL(fileURLWithPath: passwordFile))
        XCTAssertEqual(chmod(passwordFile, 0o600), 0)
        let receiver = try lab.start(
            on: .box,
            [
                Paths.castd, "--name", "Living Room", "--port", "7100", "--auth", "password", "--password-file",
                passwordFile, "--state-dir", "\(work!)/state", "--video-out", "none", "--audio-device", "none",
            ])
        XCTAssertNotNil(receiver.waitForLine(containing: "advertised as"), "\(receiver.output)")
        let environment = ["XDG_CONFIG_HOME": "\(work!)/sender"]
        func cast(_ arguments: [String]) throws -> CommandResult {
            try lab.run(on: .phone, [Paths.cast] + arguments, environment: environment)
        }

        // Advertised as a password receiver.
        let list = try cast(["list", "--json"])
        XCTAssertEqual(list.status, 0, list.stderr)
        let entries = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
        let entry = try XCTUnwrap(entries.first { $0["name"] as? String == "Living Room" }, list.stdout)
        XCTAssertEqual((entry["txt"] as? [String: String])?["auth"], "password", "\(entry)")

        // Unpaired: refused.
        let unpaired = try cast(["status", "Living Room"])
        XCTAssertEqual(unpaired.status, 4, unpaired.stderr)

        // A wrong password fails; the right one (after the 1 s backoff) pairs.
        let wrong = try cast(["pair", "Living Room", "--pin", "WRONG"])
        XCTAssertEqual(wrong.status, 4, wrong.stderr)
        XCTAssertTrue(wrong.stderr.contains("wrong password"), wrong.stderr)
        Thread.sleep(forTimeInterval: 1.2)
        let right = try cast(["pair", "Living Room", "--pin", "correct horse", "--json"])
        XCTAssertEqual(right.status, 0, right.stderr)
        let pairing = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(right.stdout.utf8)) as? [String: Any], right.stdout)
        XCTAssertEqual(pairing["name"] as? String, "Living Room")
        XCTAssertEqual(pairing["paired"] as? Bool, true)
        XCTAssertEqual((pairing["id"] as? String)?.count, 32, right.stdout)

        // Paired: no password needed any more.
        let status = try cast(["status", "Living Room"])
        XCTAssertEqual(status.status, 0, status.stderr)
        XCTAssertTrue(status.stdout.contains("state: stopped"), status.stdout)

        let paired = try lab.run(on: .box, [Paths.castd, "--list-paired", "--state-dir", "\(work!)/state"])
        XCTAssertEqual(paired.stdout.split(separator: "\n").count, 1, paired.stdout)
        XCTAssertTrue(receiver.isRunning)
        XCTAssertFalse(receiver.output.contains { $0.contains("Pairing PIN:") }, "\(receiver.output)")
        print(
            "PasswordModeTests: lab pairing with a password in \(String(format: "%.1f", Date().timeIntervalSince(start))) s"
        )
    }

    func testPasswordModeWithoutAPasswordFileIsAUsageError() throws {
        let result = try runCommand(
            [
                Paths.castd, "--auth", "password", "--listen", "127.0.0.1", "--port", "0", "--no-advertise",
                "--video-out", "none", "--audio-device", "none", "--state-dir", "\(work!)/state",
            ], timeout: 20)
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertTrue(result.stderr.contains("--auth password needs --password-file"), result.stderr)
        XCTAssertFalse(result.stderr.contains("listening on"), result.stderr)

        // An empty password file is refused just as clearly.
        let empty = "\(work!)/empty"
        _ = FileManager.default.createFile(atPath: empty, contents: Data("\n".utf8))
        XCTAssertEqual(chmod(empty, 0o600), 0)
        let emptyResult = try runCommand(
            [
                Paths.castd, "--auth", "password", "--password-file", empty, "--listen", "127.0.0.1", "--port", "0",
                "--no-advertise", "--video-out", "none", "--audio-device", "none", "--state-dir", "\(work!)/state",
            ],
            timeout: 20)
        XCTAssertEqual(emptyResult.status, 2, emptyResult.stderr)
        XCTAssertTrue(emptyResult.stderr.contains("is empty"), emptyResult.stderr)
    }

    /// A password file that group or others may read is refused, as ssh refuses such a private key (issue #29): the
    /// secret would be every local user's. castd names the mode and the fix, and does not start.
    func testAPasswordFileOthersCanReadIsRefused() throws {
        let secret = "\(work!)/readable"
        _ = FileManager.default.createFile(atPath: secret, contents: Data("correct horse\n".utf8))
        for mode: mode_t in [0o644, 0o640, 0o604] {
            XCTAssertEqual(chmod(secret, mode), 0)
            let result = try runCommand(
                [
                    Paths.castd, "--auth", "password", "--password-file", secret, "--listen", "127.0.0.1", "--port",
                    "0",
                    "--no-advertise", "--video-out", "none", "--audio-device", "none", "--state-dir", "\(work!)/state",
                ],
                timeout: 20)
            XCTAssertEqual(result.status, 2, result.stderr)
            XCTAssertTrue(result.stderr.contains("has mode 0\(String(mode, radix: 8))"), result.stderr)
            XCTAssertTrue(result.stderr.contains("chmod 600 \(secret)"), result.stderr)
            XCTAssertFalse(result.stderr.contains("listening on"), result.stderr)
        }
        XCTAssertEqual(chmod(secret, 0o400), 0)
        let daemon = try Daemon(
            [
                Paths.castd, "--auth", "password", "--password-file", secret, "--listen", "127.0.0.1", "--port", "0",
                "--no-advertise", "--video-out", "none", "--audio-device", "none", "--state-dir", "\(work!)/state",
            ],
            environment: [:])
        defer { daemon.stop() }
        XCTAssertNoThrow(try daemon.listeningPort(), "a file of mode 0400 is accepted")
    }
}
