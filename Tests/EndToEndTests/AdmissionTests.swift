import Foundation
import XCTest

/// Strangers holding connections must not delay a paired sender (issue #13, "Admission"). Before, castd had 16
/// places for connections not yet admitted and made every newcomer wait in the kernel's backlog for one: 50 idle
/// strangers made `cast status` wait past 5 s.
final class AdmissionTests: LabTestCase {
    override class var labPrefix: String { "e2adm" }

    private var senderEnvironment: [String: String] { ["XDG_CONFIG_HOME": "\(work!)/sender"] }

    /// 200 strangers on eight addresses of the phone hold connections (a third idle before TLS, a third in the middle
    /// of the handshake, a third after TLS without pairing), reopening each one castd closes, and a ninth address
    /// tries to hold 64, twice its share. A paired sender on the phone's own address asks for the status: each answer
    /// comes within 2 s (the goal, 1 s, is measured here and written down in docs/security.md).
    func testAPairedSenderIsAnsweredPromptlyWhileTwoHundredStrangersHoldConnections() throws {
        let receiver = try lab.start(
            on: .box,
            [
                Paths.castd, "--name", "Living Room", "--port", "7100", "--no-advertise", "--state-dir",
                "\(work!)/state",
                "--video-out", "none", "--audio-device", "none",
            ])
        _ = try receiver.listeningPort()
        let box = "\(lab.address(.box)):7100"
        let pair = try lab.start(
            on: .phone, [Paths.cast, "pair", box], environment: senderEnvironment, interactive: true)
        let line = try XCTUnwrap(receiver.waitForLine(containing: "Pairing PIN: ", timeout: 10), "\(receiver.output)")
        pair.type(String(line.split(separator: " ").last ?? ""))
        XCTAssertEqual(pair.waitForExit(timeout: 20), 0, "\(pair.output)")

        func status() throws -> Double {
            let started = Date()
            let result = try lab.run(
                on: .phone, [Paths.cast, "status", box], environment: senderEnvironment, timeout: 30)
            let seconds = Date().timeIntervalSince(started)
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertTrue(result.stdout.contains("state: stopped"), result.stdout)
            return seconds
        }
        let quiet = try (0..<3).map { _ in try status() }
        let castd = try XCTUnwrap(Processes.castd(under: receiver.pid))
        let residentBefore = Processes.residentKilobytes(castd)

        // The strangers' addresses: the phone's lab address is the paired sender's.
        let phone = lab.address(.phone)
        let prefix = phone[...phone.lastIndex(of: ".")!]
        let strangers = (0..<9).map { "\(prefix)\(200 + $0)" }
        for address in strangers {
            let added = try lab.run(on: .phone, ["ip", "addr", "add", "\(address)/24", "dev", "lab0"])
            XCTAssertEqual(added.status, 0, added.stderr)
        }
        let plan = strangers.prefix(8).map { "\($0):25" } + ["\(strangers[8]):64"]
        // The attacker would be another device: niced, so that its own CPU (about a core, reopening at once) does not
        // count against castd and cast on this shared machine. The kernel's share of its connections still does.
        let flood = try lab.start(
            on: .phone, ["nice", "-n", "10", "python3", Self.floodScript, lab.address(.box), "7100"] + plan)
        defer { flood.stop() }
        let holding = flood.waitForLine(timeout: 30) { line in
            line.hasPrefix("holding ") && (Int(line.split(separator: " ")[1]) ?? 0) >= 200
        }
        XCTAssertNotNil(holding, "the strangers never held 200 connections: \(flood.output.suffix(3))")

        // Measured while they hold their places and every few seconds reopen those castd closes (handshake and hello
        // timeouts), so that some measurements fall among the reopenings.
        var attacked: [Double] = []
        for _ in 0..<8 {
            attacked.append(try status())
            Thread.sleep(forTimeInterval: 0.7)
        }
        let last = flood.output.last { $0.hasPrefix("holding ") } ?? "?"
        let residentDuring = Processes.residentKilobytes(castd)
        let threads = Processes.status(of: castd)["Threads"] ?? "?"
        func figures(_ values: [Double]) -> String {
            let sorted = values.sorted()
            return String(format: "median %.2f s, max %.2f s", sorted[sorted.count / 2], sorted.last ?? 0)
        }
        print(
            "cast status (process start to exit): alone \(figures(quiet)); while strangers hold connections "
                + "(\(last)) \(figures(attacked)) over \(attacked.count) runs; "
                + "castd VmRSS \(residentBefore) kB before, \(residentDuring) kB during, \(threads) threads")
        // The goal (a second) is in the bench; the bound is below the 4.8 s a sender waited for the strangers' handshake
        // timeout before admission had a place for paired senders.
        XCTAssertLessThan(attacked.max() ?? .infinity, 4, "\(attacked)")
        XCTAssertTrue(receiver.isRunning)
        // The greedy address was held to its share, and said so at most once a second.
        XCTAssertTrue(
            receiver.output.contains { $0.contains("already has 32 connections waiting") },
            "\(receiver.output.suffix(5))")
    }

    static let floodScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/stranger_flood.py").path
}
