import Foundation
import XCTest

/// Failed pairing attempts survive a restart (issue #29): castd keeps the count in its state directory, so restarting
/// it does not hand a guesser a fresh set of attempts; only the operator's SIGHUP reopens pairing. castd on loopback
/// with `--pairing-attempts 1`, the real `cast pair` typing a wrong PIN.
final class PairingFailureRestartTests: XCTestCase {
    private var work: String!
    private var receiver: Daemon?

    override func setUpWithError() throws {
        work = NSTemporaryDirectory() + "cast-pairfail-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
    }

    override func tearDown() {
        receiver?.stop()
        if let work { try? FileManager.default.removeItem(atPath: work) }
    }

    private func startReceiver() throws -> (Daemon, UInt16) {
        let started = try Daemon(
            [
                Paths.castd, "--name", "Guarded", "--listen", "127.0.0.1", "--port", "0", "--no-advertise",
                "--pairing-attempts", "1", "--audio-device", "none", "--video-out", "none", "--state-dir",
                "\(work!)/state",
            ],
            environment: [:])
        receiver = started
        return (started, try started.listeningPort())
    }

    /// `cast pair` typing what `answer` makes of the PIN castd shows; its exit status and output.
    private func pair(_ receiver: Daemon, port: UInt16, answer: (String) -> String) throws -> (Int32?, [String]) {
        let before = receiver.output.count
        let pair = try Daemon(
            [Paths.cast, "pair", "127.0.0.1:\(port)"], environment: ["XDG_CONFIG_HOME": "\(work!)/sender"],
            interactive: true)
        defer { pair.stop() }
        if let line = receiver.waitForLine(containing: "Pairing PIN: ", timeout: 10, after: before) {
            pair.type(answer(String(line.split(separator: " ").last ?? "")))
        }
        return (pair.waitForExit(timeout: 20), pair.output)
    }

    func testARestartDoesNotReopenPairingAndSIGHUPDoes() throws {
        var (castd, port) = try startReceiver()
        let (wrong, wrongOutput) = try pair(castd, port: port) { pin in
            String(pin.prefix(1) == "1" ? "2" : "1") + pin.dropFirst()
        }
        XCTAssertEqual(wrong, 4, "\(wrongOutput)")
        XCTAssertNotNil(castd.waitForLine(containing: "pairing closed", timeout: 5), "\(castd.output)")
        let stored = try String(contentsOfFile: "\(work!)/state/pairing-failures", encoding: .utf8)
        XCTAssertEqual(stored, "1\n")
        castd.stop()

        // Restarted: still closed, no PIN shown, the sender told so.
        (castd, port) = try startReceiver()
        XCTAssertNotNil(castd.waitForLine(containing: "pairing is closed", timeout: 5), "\(castd.output)")
        let before = castd.output.count
        let (refused, refusedOutput) = try pair(castd, port: port) { $0 }
        print(
            "cast pair after a restart with pairing closed: exit \(refused.map(String.init) ?? "none"): "
                + "\(refusedOutput.suffix(2))")
        XCTAssertEqual(refused, 4, "\(refusedOutput)")
        XCTAssertTrue(refusedOutput.joined().contains("closed"), "\(refusedOutput)")
        XCTAssertFalse(castd.output.dropFirst(before).contains { $0.contains("Pairing PIN: ") }, "\(castd.output)")

        // The operator's SIGHUP reopens it, and the cleared count is stored.
        kill(castd.pid, SIGHUP)
        XCTAssertNotNil(castd.waitForLine(containing: "pairing reopened", timeout: 5), "\(castd.output)")
        let (paired, pairedOutput) = try pair(castd, port: port) { $0 }
        XCTAssertEqual(paired, 0, "\(pairedOutput)")
        XCTAssertEqual(try String(contentsOfFile: "\(work!)/state/pairing-failures", encoding: .utf8), "0\n")
    }
}
