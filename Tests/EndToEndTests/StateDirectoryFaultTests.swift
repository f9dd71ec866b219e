import CastSecurity
import Foundation
import XCTest

/// castd whose state directory cannot take writes: mounted read-only, or on a full file system. Each runs in a
/// mount namespace of its own (`unshare -m`), so the mounts are private to that castd; as root, a chmod would not
/// stop writes. Senders pair with `--auth password` on loopback. See docs/faults.md.
final class StateDirectoryFaultTests: XCTestCase {
    private var work: String!
    private var daemon: Daemon?
    private let password = "state fault secret"

    override func setUpWithError() throws {
        guard getuid() == 0 else { throw XCTSkip("mount namespaces need root") }
        work = NSTemporaryDirectory() + "cast-statedir-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: "\(work!)/state", withIntermediateDirectories: true)
        try Data((password + "\n").utf8).write(to: URL(fileURLWithPath: "\(work!)/password"))
        XCTAssertEqual(chmod("\(work!)/password", 0o600), 0)
        // The receiver has run before: its identity is there.
        _ = try Identity.loadOrCreate(directory: "\(work!)/state")
    }

    override func tearDown() {
        daemon?.stop()
        if let work { try? FileManager.default.removeItem(atPath: work) }
    }

    /// Starts castd in a mount namespace of its own after `prepare` (shell commands, `$S` is the state directory);
    /// returns its port.
    private func startReceiver(prepare: String) throws -> (Daemon, String) {
        let castd = [
            Paths.castd, "--name", "Shelf", "--auth", "password", "--password-file", "\(work!)/password", "--port", "0",
            "--listen", "127.0.0.1", "--no-advertise", "--video-out", "none", "--audio-device", "none",
            "--state-dir", "\(work!)/state",
        ].map { "'\($0)'" }.joined(separator: " ")
        let daemon = try Daemon(
            [
                "unshare", "-m", "--propagation", "private", "sh", "-c",
                "S='\(work!)/state' && \(prepare) && exec \(castd)",
            ],
            environment: [:])
        self.daemon = daemon
        return (daemon, "127.0.0.1:\(try daemon.listeningPort())")
    }

    private func cast(_ arguments: [String], sender: String) throws -> CommandResult {
        try runCommand([Paths.cast] + arguments, environment: ["XDG_CONFIG_HOME": "\(work!)/\(sender)"], timeout: 30)
    }

    /// Read-only: castd starts, says that pairings cannot be stored, and refuses to pair (exit 4) before any secret
    /// is exchanged.
    func testAReadOnlyStateDirectoryStartsButRefusesToPair() throws {
        let (daemon, target) = try startReceiver(prepare: #"mount --bind "$S" "$S" && mount -o remount,bind,ro "$S""#)
        XCTAssertNotNil(daemon.waitForLine(containing: "pairings cannot be stored", timeout: 5), "\(daemon.output)")
        let pair = try cast(["pair", target, "--pin", password], sender: "a")
        XCTAssertEqual(pair.status, 4, pair.stderr)
        XCTAssertTrue(pair.stderr.contains("cannot store pairings"), pair.stderr)
        XCTAssertNotNil(daemon.waitForLine(containing: "pairing refused: cannot store pairings", timeout: 2))
        XCTAssertTrue(daemon.isRunning)
    }

    /// A full file system: a sender paired before the disk filled keeps working; a new pairing is refused (exit 4)
    /// and the store keeps what it had; once there is room again, pairing works.
    func testAFullDiskRefusesNewPairingsAndKeepsTheOldOnes() throws {
        let (daemon, target) = try startReceiver(
            prepare: #"cp -a "$S" "$S.copy" && mount -t tmpfs -o size=256k tmpfs "$S" && cp -a "$S.copy/." "$S""#)
        let first = try cast(["pair", target, "--pin", password], sender: "a")
        XCTAssertEqual(first.status, 0, first.stderr)

        // Fill the file system that only castd's mount namespace sees.
        let inside = ["nsenter", "--target", "\(daemon.pid)", "--mount", "--"]
        _ = try runCommand(inside + ["sh", "-c", "dd if=/dev/zero of='\(work!)/state/filler' bs=4k 2>/dev/null; true"])
        let storeBefore = try runCommand(inside + ["sh", "-c", "cat '\(work!)/state'/*.json"]).stdout

        let second = try cast(["pair", target, "--pin", password], sender: "b")
        XCTAssertEqual(second.status, 4, second.stderr)
        XCTAssertTrue(second.stderr.contains("could not store the pairing"), second.stderr)
        XCTAssertNotNil(daemon.waitForLine(containing: "not stored", timeout: 2), "\(daemon.output)")
        let storeAfter = try runCommand(inside + ["sh", "-c", "cat '\(work!)/state'/*.json"]).stdout
        XCTAssertEqual(storeAfter, storeBefore, "the pairings on disk are unchanged")
        XCTAssertFalse(storeAfter.isEmpty)
        let status = try cast(["status", target], sender: "a")
        XCTAssertEqual(status.status, 0, "the sender paired before still works: \(status.stderr)")

        _ = try runCommand(inside + ["rm", "\(work!)/state/filler"])
        Thread.sleep(forTimeInterval: 1.2)  // the attempt limiter's back-off after a failed attempt
        let third = try cast(["pair", target, "--pin", password], sender: "b")
        XCTAssertEqual(third.status, 0, third.stderr)
        XCTAssertTrue(daemon.isRunning)
    }
}
