import CastSecurity
import Foundation
import XCTest

/// "A kill -9 during a trust-store write leaves a loadable store", tested in a loop.
///
/// The writer is this very test binary run again (an XCTest bundle on Linux is an executable) with only
/// `testWriterLoop` selected and `CAST_TRUST_STORE_WRITER_DIR` set: it adds entries to both trust stores
/// in that directory as fast as it can. The parent kills it with SIGKILL at a random moment, then checks
/// that both stores load, that every entry an earlier writer saved is still there, and that the temporary
/// file of a write cut short does not get in the way.
final class TrustStoreCrashTests: XCTestCase {
    static let writerDirectoryVariable = "CAST_TRUST_STORE_WRITER_DIR"
    static let readyMarker = "writer-ready"
    /// Below the stores' 1000-entry bound: past it, the writer re-saves existing entries instead of adding.
    static let entryCap = 900

    /// The writer (only with `CAST_TRUST_STORE_WRITER_DIR` set; skipped in a normal run). Runs until
    /// killed, or 60 s at most so that an orphan cannot run forever.
    func testWriterLoop() throws {
        guard let directory = ProcessInfo.processInfo.environment[Self.writerDirectoryVariable] else {
            throw XCTSkip("the writer half of testKillDuringWritesLeavesLoadableStores; runs only as its child")
        }
        let senders = try PairedSenders.load(directory: directory)
        let receivers = try KnownReceivers.load(directory: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: directory + "/" + Self.readyMarker, contents: nil)
        let deadline = Date().addingTimeInterval(60)
        var round = 0
        while Date() < deadline {
            round += 1
            let existing = try senders.list()
            if existing.count < Self.entryCap {
                try senders.add(publicKey: randomKey(), name: "sender-\(getpid())-\(round)")
            } else {
                let again = existing[round % existing.count]
                try senders.add(publicKey: again.publicKey, name: again.name)
            }
            let known = try receivers.list()
            if known.count < Self.entryCap {
                let key = randomKey()
                try receivers.pin(
                    id: fingerprint(ofPublicKey: key), publicKey: key, name: "receiver-\(getpid())-\(round)")
            } else {
                let again = known[round % known.count]
                try receivers.pin(id: again.id, publicKey: again.publicKey, name: again.name)
            }
        }
    }

    func testKillDuringWritesLeavesLoadableStores() throws {
        if ProcessInfo.processInfo.environment[Self.writerDirectoryVariable] != nil {
            throw XCTSkip("this is the writer child")
        }
        let binary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let directory = try Fixtures.temporaryDirectory(self)
        let store = directory + "/store"
        let writerLog = directory + "/writer.log"
        let marker = store + "/" + Self.readyMarker
        try FileManager.default.createDirectory(
            atPath: store, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let started = Date()

        let iterations = 50
        var previousSenders: Set<[UInt8]> = []
        var previousReceivers: Set<String> = []
        var midWriteKills = 0
        var writesBeforeKill: [Int] = []
        for iteration in 1...iterations {
            unlink(marker)
            _ = FileManager.default.createFile(atPath: writerLog, contents: nil)
            let writer = Process()
            writer.executableURL = URL(fileURLWithPath: binary)
            writer.arguments = ["CastSecurityTests.TrustStoreCrashTests/testWriterLoop"]
            var environment = ProcessInfo.processInfo.environment
            environment[Self.writerDirectoryVariable] = store
            writer.environment = environment
            let log = try FileHandle(forWritingTo: URL(fileURLWithPath: writerLog))
            writer.standardOutput = log
            writer.standardError = log
            writer.standardInput = FileHandle.nullDevice
            try writer.run()
            try? log.close()

            // Wait until the writer is in its loop, then let it write for a random 5–80 ms and kill it.
            let readyBy = Date().addingTimeInterval(30)
            while !FileManager.default.fileExists(atPath: marker) && writer.isRunning && Date() < readyBy {
                usleep(2_000)
            }
            guard FileManager.default.fileExists(atPath: marker) else {
                kill(writer.processIdentifier, SIGKILL)
                writer.waitUntilExit()
                let output = (try? String(contentsOfFile: writerLog, encoding: .utf8)) ?? ""
                return XCTFail("writer \(iteration) never started its loop; its output:\n\(output.suffix(3000))")
            }
            usleep(UInt32.random(in: 5_000...80_000))
            XCTAssertTrue(writer.isRunning, "writer \(iteration) ended on its own: \(writerOutput(writerLog))")
            kill(writer.processIdentifier, SIGKILL)
            writer.waitUntilExit()
            XCTAssertEqual(writer.terminationReason, .uncaughtSignal)

            // A temporary file left behind means the kill landed between creating it and renaming it.
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: store).filter {
                $0.contains(".tmp-\(writer.processIdentifier)-")
            }
            if !leftovers.isEmpty { midWriteKills += 1 }

            let senders = try PairedSenders.load(directory: store).list()
            let receivers = try KnownReceivers.load(directory: store).list()
            let senderKeys = Set(senders.map(\.publicKey))
            let receiverIDs = Set(receivers.map(\.id))
            XCTAssertEqual(senderKeys.count, senders.count, "no duplicates")
            XCTAssertTrue(
                previousSenders.isSubset(of: senderKeys),
                "iteration \(iteration): \(previousSenders.subtracting(senderKeys).count) paired senders lost")
            XCTAssertTrue(
                previousReceivers.isSubset(of: receiverIDs),
                "iteration \(iteration): \(previousReceivers.subtracting(receiverIDs).count) known receivers lost")
            XCTAssertGreaterThanOrEqual(senders.count, previousSenders.count)
            XCTAssertGreaterThanOrEqual(receivers.count, previousReceivers.count)
            writesBeforeKill.append(senders.count - previousSenders.count)
            previousSenders = senderKeys
            previousReceivers = receiverIDs
        }

        // The next writer clears what killed writers left, and the stores still work.
        let senders = try PairedSenders.load(directory: store)
        try senders.add(publicKey: randomKey(), name: "after the kills")
        let receivers = try KnownReceivers.load(directory: store)
        let key = randomKey()
        try receivers.pin(id: fingerprint(ofPublicKey: key), publicKey: key, name: "after the kills")
        XCTAssertEqual(try PairedSenders.load(directory: store).list().count, previousSenders.count + 1)
        let remaining = try FileManager.default.contentsOfDirectory(atPath: store).filter { $0.contains(".tmp-") }
        XCTAssertEqual(remaining, [], "temporary files of killed writers are removed by the next write")

        XCTAssertGreaterThan(previousSenders.count, 0, "the writers saved something")
        let seconds = String(format: "%.1f", Date().timeIntervalSince(started))
        print(
            "TrustStoreCrashTests: \(iterations) kills in \(seconds) s; \(previousSenders.count) paired senders and "
                + "\(previousReceivers.count) known receivers at the end; \(midWriteKills) kills left a temporary file "
                + "(mid-write); entries added per writer: \(writesBeforeKill)")
    }

    private func writerOutput(_ path: String) -> String {
        String(((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").suffix(2000))
    }
}

private func randomKey() -> [UInt8] {
    (0..<32).map { _ in UInt8.random(in: 0...255) }
}
