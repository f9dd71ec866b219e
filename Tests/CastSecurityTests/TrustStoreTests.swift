import CastSystem
import Foundation
import XCTest

@testable import CastSecurity

final class TrustStoreTests: XCTestCase {
    private enum Fixtures {
        static func key(_ seed: UInt8) -> [UInt8] { (0..<32).map { UInt8($0) &* 7 &+ seed } }
        static let date = Date(timeIntervalSince1970: 1_738_346_531)  // 2025-01-31T18:02:11Z
    }

    // MARK: Round trips

    func testPairedSendersRoundTripThroughTheFile() throws {
        let directory = try storeDirectory()
        let store = try PairedSenders.load(directory: directory)
        XCTAssertEqual(try store.list(), [])
        XCTAssertFalse(FileManager.default.fileExists(atPath: store.path), "no file before the first add")

        try store.add(publicKey: Fixtures.key(1), name: "alice@laptop", pairedAt: Fixtures.date)
        try store.add(publicKey: Fixtures.key(2), name: "bob@phone", pairedAt: Fixtures.date.addingTimeInterval(60.7))
        try store.add(publicKey: Fixtures.key(1), name: "alice@new-laptop", pairedAt: Fixtures.date)

        let reloaded = try PairedSenders.load(directory: directory)
        XCTAssertEqual(try reloaded.list(), try store.list())
        XCTAssertEqual(try reloaded.list().map(\.name), ["bob@phone", "alice@new-laptop"])
        XCTAssertEqual(try reloaded.list().first?.pairedAt, Fixtures.date.addingTimeInterval(60))
        XCTAssertTrue(try reloaded.contains(publicKey: Fixtures.key(2)))
        XCTAssertFalse(try reloaded.contains(publicKey: Fixtures.key(3)))
        XCTAssertEqual(try permissions(store.path), 0o600)

        let text = try String(contentsOfFile: store.path, encoding: .utf8)
        XCTAssertTrue(text.contains(#""pairedAt" : "2025-01-31T18:02:11Z""#), text)
        XCTAssertTrue(text.contains(#""publicKey" : "\#(hexString(Fixtures.key(1)))""#), text)
    }

    func testPairedSendersRemoveByIdPrefixOrKey() throws {
        let store = try PairedSenders.load(directory: try storeDirectory())
        let first = try store.add(publicKey: Fixtures.key(1), name: "a")
        let second = try store.add(publicKey: Fixtures.key(2), name: "b")
        XCTAssertEqual(first.id.count, 32)

        XCTAssertEqual(try store.remove("zzzz"), .notFound)
        XCTAssertEqual(try store.remove(String(first.id.prefix(3))), .notFound, "prefixes shorter than 4 never match")
        XCTAssertEqual(try store.remove(first.id.uppercased()), .removed(first))
        XCTAssertEqual(try store.remove(hexString(second.publicKey)), .removed(second))
        XCTAssertEqual(try store.list(), [])
    }

    func testPairedSendersAmbiguousPrefixRemovesNothing() throws {
        let store = try PairedSenders.load(directory: try storeDirectory())
        // Keys whose hex starts alike: an 8-digit prefix shared by both.
        var one = Fixtures.key(1)
        var two = Fixtures.key(1)
        one[31] = 0
        two[31] = 1
        try store.add(publicKey: one, name: "one")
        try store.add(publicKey: two, name: "two")
        guard case .ambiguous(let matches) = try store.remove(String(hexString(one).prefix(8))) else {
            return XCTFail("expected an ambiguous prefix")
        }
        XCTAssertEqual(Set(matches.map(\.name)), ["one", "two"])
        XCTAssertEqual(try store.list().count, 2)
    }

    func testKnownReceiversPinLookupAndRemove() throws {
        let directory = try storeDirectory()
        let store = try KnownReceivers.load(directory: directory)
        let livingRoom = try store.pin(
            id: fingerprint(ofPublicKey: Fixtures.key(1)), publicKey: Fixtures.key(1), name: "Living Room",
            pairedAt: Fixtures.date)
        let kitchen = try store.pin(
            id: fingerprint(ofPublicKey: Fixtures.key(2)), publicKey: Fixtures.key(2), name: "Kitchen",
            pairedAt: Fixtures.date)

        let reloaded = try KnownReceivers.load(directory: directory)
        XCTAssertEqual(try reloaded.list(), [kitchen, livingRoom])
        XCTAssertEqual(try reloaded.lookup(id: livingRoom.id)?.publicKey, Fixtures.key(1))
        XCTAssertEqual(try reloaded.lookup(id: livingRoom.id.uppercased()), livingRoom)
        XCTAssertNil(try reloaded.lookup(id: "0123"))
        XCTAssertEqual(try reloaded.lookup(name: "living room"), [livingRoom])
        XCTAssertEqual(try permissions(reloaded.path), 0o600)

        // Re-pairing under the same name (the receiver got a new key) replaces the old pin.
        let replaced = try reloaded.pin(
            id: fingerprint(ofPublicKey: Fixtures.key(3)), publicKey: Fixtures.key(3), name: "LIVING ROOM")
        XCTAssertEqual(try reloaded.lookup(name: "Living Room"), [replaced])
        XCTAssertNil(try reloaded.lookup(id: livingRoom.id))

        XCTAssertEqual(try reloaded.remove("kitchen"), .removed(kitchen))
        XCTAssertEqual(try reloaded.remove(String(replaced.id.prefix(6))), .removed(replaced))
        XCTAssertEqual(try reloaded.remove("Kitchen"), .notFound)
        XCTAssertEqual(try KnownReceivers.load(directory: directory).list(), [])
    }

    func testKnownReceiversKeepTheAddressEachWasLastReachedAt() throws {
        let directory = try storeDirectory()
        let store = try KnownReceivers.load(directory: directory)
        let living = try store.pin(
            id: fingerprint(ofPublicKey: Fixtures.key(1)), publicKey: Fixtures.key(1), name: "Living Room",
            address: "10.0.0.5:7100", pairedAt: Fixtures.date)
        let kitchen = try store.pin(
            id: fingerprint(ofPublicKey: Fixtures.key(2)), publicKey: Fixtures.key(2), name: "Kitchen",
            pairedAt: Fixtures.date)
        XCTAssertEqual(living.address, "10.0.0.5:7100")
        XCTAssertNil(kitchen.address)

        // The kitchen now answers at the living room's old address: the address moves to it.
        XCTAssertTrue(try store.recordAddress("10.0.0.5:7100", forID: kitchen.id))
        let reloaded = try KnownReceivers.load(directory: directory)
        XCTAssertEqual(try reloaded.lookup(id: kitchen.id)?.address, "10.0.0.5:7100")
        XCTAssertNil(try reloaded.lookup(id: living.id)?.address)
        XCTAssertFalse(try reloaded.recordAddress("10.0.0.9:7100", forID: "ffff"), "not paired: nothing recorded")

        // An unchanged address does not rewrite the file.
        let before = try FileManager.default.attributesOfItem(atPath: reloaded.path)[.systemFileNumber] as? Int
        XCTAssertTrue(try reloaded.recordAddress("10.0.0.5:7100", forID: kitchen.id))
        XCTAssertEqual(
            try FileManager.default.attributesOfItem(atPath: reloaded.path)[.systemFileNumber] as? Int, before)

        XCTAssertThrowsError(try reloaded.recordAddress(String(repeating: "9", count: 301), forID: kitchen.id))
        XCTAssertThrowsError(try reloaded.recordAddress("", forID: kitchen.id))
    }

    func testAKnownReceiversFileWithoutAddressesIsRead() throws {
        let directory = try storeDirectory()
        let id = fingerprint(ofPublicKey: Fixtures.key(1))
        let text = """
            {"receivers":{"\(id)":{"name":"Living Room","pairedAt":"2025-01-31T18:02:11Z",\
            "publicKey":"\(hexString(Fixtures.key(1)))"}},"version":1}
            """
        try write(text, to: directory + "/" + KnownReceivers.fileName)
        let entry = try XCTUnwrap(try KnownReceivers.load(directory: directory).lookup(id: id))
        XCTAssertEqual(entry.name, "Living Room")
        XCTAssertNil(entry.address)
    }

    // MARK: Refusals

    func testCorruptFileIsRefusedWithAClearMessageAndLeftAsItIs() throws {
        let directory = try storeDirectory()
        let path = directory + "/" + PairedSenders.fileName
        let corruptions = [
            "{\"version\": 1, \"senders\": [",
            "{\"version\": 1, \"senders\": [{\"publicKey\": \"zz\", \"name\": \"x\", \"pairedAt\": \"2025-01-31T18:02:11Z\"}]}",
            "{\"version\": 2, \"senders\": []}",
            "",
        ]
        for corrupt in corruptions {
            try write(corrupt, to: path)
            assertThrows(.trustStore, containing: [path, "corrupt"]) {
                _ = try PairedSenders.load(directory: directory)
            }
            XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), corrupt, "the file is not rewritten")
        }
    }

    func testFileCorruptedAfterLoadIsNotOverwrittenByAnAdd() throws {
        let directory = try storeDirectory()
        let store = try PairedSenders.load(directory: directory)
        try store.add(publicKey: Fixtures.key(1), name: "a")
        try write("garbage", to: store.path)
        assertThrows(.trustStore, containing: ["corrupt"]) { try store.add(publicKey: Fixtures.key(2), name: "b") }
        assertThrows(.trustStore, containing: ["corrupt"]) { _ = try store.contains(publicKey: Fixtures.key(1)) }
        XCTAssertEqual(try String(contentsOfFile: store.path, encoding: .utf8), "garbage")
    }

    func testLoosePermissionsAreRefusedNamingTheMode() throws {
        let directory = try storeDirectory()
        let store = try KnownReceivers.load(directory: directory)
        try store.pin(id: "abcd", publicKey: Fixtures.key(1), name: "Box")
        XCTAssertEqual(chmod(store.path, 0o644), 0)
        assertThrows(.trustStore, containing: [store.path, "0644", "chmod 600"]) {
            _ = try KnownReceivers.load(directory: directory)
        }
        XCTAssertEqual(try permissions(store.path), 0o644, "left for the user to fix")
    }

    func testOversizedFileIsRefused() throws {
        let directory = try storeDirectory()
        let path = directory + "/" + PairedSenders.fileName
        try write(String(repeating: " ", count: TrustStoreLimits.maximumFileSize + 1), to: path)
        assertThrows(.trustStore, containing: ["1048576"]) { _ = try PairedSenders.load(directory: directory) }
    }

    func testEntryCountIsBounded() throws {
        let directory = try storeDirectory()
        let path = directory + "/" + PairedSenders.fileName
        func document(_ count: Int) -> String {
            let entries = (0..<count).map { index -> String in
                let key = (0..<32).map { UInt8(truncatingIfNeeded: index >> ($0 % 2 == 0 ? 0 : 8)) &+ UInt8($0) }
                return #"{"publicKey":"\#(hexString(key))","name":"s\#(index)","pairedAt":"2025-01-31T18:02:11Z"}"#
            }
            return #"{"version":1,"senders":[\#(entries.joined(separator: ","))]}"#
        }
        try write(document(1001), to: path)
        assertThrows(.trustStore, containing: ["1001 entries"]) { _ = try PairedSenders.load(directory: directory) }

        try write(document(1000), to: path)
        let store = try PairedSenders.load(directory: directory)
        XCTAssertEqual(try store.list().count, 1000)
        assertThrows(.trustStore, containing: ["full"]) {
            try store.add(publicKey: [UInt8](repeating: 0xEE, count: 32), name: "x")
        }
        XCTAssertEqual(try PairedSenders.load(directory: directory).list().count, 1000)
    }

    // MARK: Writing

    func testFailedWriteThrowsAndLeavesTheOldFileAndMemoryIntact() throws {
        let directory = try storeDirectory()
        let store = try PairedSenders.load(directory: directory)
        try store.add(publicKey: Fixtures.key(1), name: "kept")
        let before = try Data(contentsOf: URL(fileURLWithPath: store.path))

        XCTAssertEqual(chmod(directory, 0o555), 0)
        defer { chmod(directory, 0o700) }
        try withoutRootPrivileges {
            XCTAssertThrowsError(try store.add(publicKey: Fixtures.key(2), name: "lost")) { error in
                let error = error as? SecurityError
                XCTAssertEqual(error?.kind, .system, "\(String(describing: error))")
                XCTAssertEqual(error?.errno, EACCES, "\(String(describing: error))")
            }
        }
        chmod(directory, 0o700)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store.path)), before)
        XCTAssertEqual(try store.list().map(\.name), ["kept"])
        XCTAssertFalse(try store.contains(publicKey: Fixtures.key(2)))
        XCTAssertEqual(try PairedSenders.load(directory: directory).list().map(\.name), ["kept"])
        XCTAssertEqual(try leftovers(in: directory), [])
    }

    func testConcurrentAddsFromTwoThreadsLoseNothing() throws {
        let directory = try storeDirectory()
        let shared = try PairedSenders.load(directory: directory)
        // Two threads on one object, and two threads on two objects (as two processes would be).
        let separate = [try PairedSenders.load(directory: directory), try PairedSenders.load(directory: directory)]
        let perThread = 20
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            let store = thread < 2 ? shared : separate[thread - 2]
            for index in 0..<perThread {
                var key = Fixtures.key(UInt8(thread))
                key[0] = UInt8(thread)
                key[1] = UInt8(index)
                do {
                    try store.add(publicKey: key, name: "t\(thread)-\(index)")
                } catch {
                    XCTFail("add failed: \(error)")
                }
            }
        }
        let all = try PairedSenders.load(directory: directory).list()
        XCTAssertEqual(all.count, 4 * perThread)
        XCTAssertEqual(try shared.list().count, 4 * perThread, "the shared object sees the other objects' writes")
        XCTAssertEqual(try leftovers(in: directory), [])
    }

    func testChangesByAnotherProcessAreSeen() throws {
        let directory = try storeDirectory()
        let daemon = try PairedSenders.load(directory: directory)
        let paired = try daemon.add(publicKey: Fixtures.key(1), name: "a")
        XCTAssertTrue(try daemon.contains(publicKey: Fixtures.key(1)))
        // `castd --unpair ID` while castd runs.
        XCTAssertEqual(try PairedSenders.load(directory: directory).remove(paired.id), .removed(paired))
        XCTAssertFalse(try daemon.contains(publicKey: Fixtures.key(1)))
    }

    func testTemporaryFilesOfACrashedWriterAreIgnoredAndCleanedUp() throws {
        let directory = try storeDirectory()
        let store = try PairedSenders.load(directory: directory)
        try store.add(publicKey: Fixtures.key(1), name: "a")
        // What a writer killed between write and rename leaves behind.
        try write("{\"version\": 1, \"sen", to: store.path + ".tmp-99999-1")
        XCTAssertEqual(try PairedSenders.load(directory: directory).list().map(\.name), ["a"])
        try store.add(publicKey: Fixtures.key(2), name: "b")
        XCTAssertEqual(try leftovers(in: directory), [])
    }

    func testCreatesAMissingDirectoryPrivately() throws {
        let directory = try storeDirectory() + "/config/cast"
        let store = try KnownReceivers.load(directory: directory)
        try store.pin(id: "abcd", publicKey: Fixtures.key(1), name: "Box")
        XCTAssertEqual(try permissions(directory), 0o700)
        XCTAssertEqual(try permissions(store.path), 0o600)
    }

    // MARK: Helpers

    private func storeDirectory() throws -> String {
        try CastSecurityTests.Fixtures.temporaryDirectory(self)
    }

    private func write(_ text: String, to path: String) throws {
        unlink(path)
        XCTAssertTrue(
            FileManager.default.createFile(
                atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]))
    }

    private func permissions(_ path: String) throws -> Int {
        try (FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
    }

    /// Files other than the store and its lock file: temporary files that were not cleaned up.
    private func leftovers(in directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter {
            !$0.hasSuffix(".json") && !$0.hasSuffix(".json.lock")
        }
    }

    /// Runs `body` with this thread's file-system uid set to nobody when running as root (as CI does), so
    /// that directory permissions apply. `setfsuid` is per thread and drops CAP_DAC_OVERRIDE with it.
    private func withoutRootPrivileges(_ body: () throws -> Void) throws {
        guard geteuid() == 0 else { return try body() }
        typealias SetFileSystemUID = @convention(c) (UInt32) -> Int32
        let symbol = try XCTUnwrap(dlsym(dlopen(nil, RTLD_NOW), "setfsuid"))
        let setfsuid = unsafeBitCast(symbol, to: SetFileSystemUID.self)
        _ = setfsuid(65534)
        defer { _ = setfsuid(0) }
        try body()
    }
}
