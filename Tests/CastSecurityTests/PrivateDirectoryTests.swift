import CastSecurity
import CastSystem
import Foundation
import XCTest

/// The state and config directories, and the key and store files in them, as an attacker with a local account might
/// prepare them (issue #13, "Trust store"): each is refused with a message naming the path and the fix, at once.
final class PrivateDirectoryTests: XCTestCase {
    func testAGroupOrWorldWritableDirectoryIsRefusedForTheKeyAndTheStores() throws {
        for mode: mode_t in [0o777, 0o770, 0o1777, 0o722] {
            let directory = try Fixtures.temporaryDirectory(self)
            _ = try Identity.loadOrCreate(directory: directory)
            XCTAssertEqual(chmod(directory, mode), 0)
            let shown = String(format: "%04o", mode)
            assertThrows(.keyFile, containing: [directory, shown, "chmod go-w \(directory)"]) {
                _ = try Identity.loadOrCreate(directory: directory)
            }
            assertThrows(.trustStore, containing: [directory, shown, "chmod go-w"]) {
                _ = try PairedSenders.load(directory: directory)
            }
            assertThrows(.trustStore, containing: [directory, shown]) {
                _ = try KnownReceivers.load(directory: directory)
            }
            XCTAssertEqual(chmod(directory, 0o700), 0)
        }
        // Readable by others is not a threat to the directory itself (the files in it are 0600).
        let directory = try Fixtures.temporaryDirectory(self)
        XCTAssertEqual(chmod(directory, 0o755), 0)
        _ = try Identity.loadOrCreate(directory: directory)
        _ = try PairedSenders.load(directory: directory)
    }

    func testADirectoryOwnedByAnotherUserIsRefused() throws {
        guard geteuid() == 0 else { throw XCTSkip("giving a directory to another user needs root") }
        let directory = try Fixtures.temporaryDirectory(self)
        _ = try Identity.loadOrCreate(directory: directory)
        XCTAssertEqual(chown(directory, 12345, 12345), 0)
        assertThrows(.keyFile, containing: [directory, "uid 12345", "chown 0"]) {
            _ = try Identity.loadOrCreate(directory: directory)
        }
        assertThrows(.trustStore, containing: [directory, "uid 12345"]) {
            _ = try PairedSenders.load(directory: directory)
        }
        // A key file given to another user inside a good directory is refused too.
        XCTAssertEqual(chown(directory, 0, 0), 0)
        XCTAssertEqual(chown(directory + "/" + Identity.fileName, 12345, 12345), 0)
        assertThrows(.keyFile, containing: ["identity.pem", "uid 12345"]) {
            _ = try Identity.loadOrCreate(directory: directory)
        }
    }

    func testASymbolicLinkAsTheKeyFileIsRefusedAndLeftAlone() throws {
        let elsewhere = try Fixtures.temporaryDirectory(self)
        _ = try Identity.loadOrCreate(directory: elsewhere)
        let directory = try Fixtures.temporaryDirectory(self)
        let keyFile = directory + "/" + Identity.fileName
        XCTAssertEqual(symlink(elsewhere + "/" + Identity.fileName, keyFile), 0)
        assertThrows(.keyFile, containing: [keyFile, "symbolic link"]) {
            _ = try Identity.loadOrCreate(directory: directory)
        }
        let target = try FileManager.default.destinationOfSymbolicLink(atPath: keyFile)
        XCTAssertEqual(target, elsewhere + "/" + Identity.fileName, "the link is not replaced")
    }

    /// A FIFO in the key's place used to block the open (and castd's start) until someone wrote to it.
    func testAFIFOAsTheKeyFileOrAStoreIsRefusedAtOnce() throws {
        let directory = try Fixtures.temporaryDirectory(self)
        let keyFile = directory + "/" + Identity.fileName
        let store = directory + "/paired-senders.json"
        XCTAssertEqual(mkfifo(keyFile, 0o600), 0)
        XCTAssertEqual(mkfifo(store, 0o600), 0)
        let started = ContinuousClock.now
        // On a thread of its own, so that a hang fails the test instead of stopping the run.
        let outcome = Outcome()
        Thread {
            outcome.set(key: Result<Void, any Error> { _ = try Identity.loadOrCreate(directory: directory) })
            outcome.set(store: Result<Void, any Error> { _ = try PairedSenders.load(directory: directory) })
        }.start()
        XCTAssertTrue(outcome.wait(seconds: 5), "opening a FIFO hung")
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(1))
        assertThrows(.keyFile, containing: [keyFile, "not a regular file"]) { try outcome.key?.get() }
        assertThrows(.trustStore, containing: [store, "not a regular file"]) { try outcome.store?.get() }
    }
}

/// What the loading thread found, handed to the test's thread.
private final class Outcome: @unchecked Sendable {
    // Invariant: `condition` guards every var.
    private let condition = NSCondition()
    private(set) var key: Result<Void, any Error>?
    private(set) var store: Result<Void, any Error>?

    func set(key: Result<Void, any Error>) { condition.withLock { self.key = key } }

    func set(store: Result<Void, any Error>) {
        condition.withLock {
            self.store = store
            condition.broadcast()
        }
    }

    /// Whether both results arrived within `seconds`.
    func wait(seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        return condition.withLock {
            while store == nil { if !condition.wait(until: deadline) { return false } }
            return true
        }
    }
}
