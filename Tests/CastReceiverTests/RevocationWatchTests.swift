import CastTestSupport
import Foundation
import Synchronization
import XCTest

@testable import CastReceiver

/// When castd looks for unpaired senders, with a real inotify watch of a temporary state directory: at each change,
/// every interval once the directory is gone or cannot be watched, and never after `stop`.
final class RevocationWatchTests: XCTestCase {
    /// Counts the looks and keeps the log's lines.
    private final class Looks: Sendable {
        private let count = Mutex(0)
        private let lines = Mutex<[String]>([])
        var value: Int { count.withLock { $0 } }
        var log: [String] { lines.withLock { $0 } }
        var logger: Logger { Logger { _, line in self.lines.withLock { $0.append(line) } } }
        func look() { count.withLock { $0 += 1 } }
    }

    /// Whether nothing more is looked at within `seconds` (a quiet spell after `stop`, not a timing goal), counted
    /// from one interval on: a look under way when `stop` returned may still end.
    private func staysAt(_ looks: Looks, for seconds: Double) -> Bool {
        Thread.sleep(forTimeInterval: RevocationWatch.checkInterval.timeInterval)
        let before = looks.value
        Thread.sleep(forTimeInterval: seconds)
        return looks.value == before
    }

    func testAChangeInTheDirectoryIsLookedAtAndNothingAfterStop() throws {
        let directory = try TemporaryDirectory.make(for: self, prefix: "cast-revocations")
        let looks = Looks()
        let watch = RevocationWatch(directory: directory, logger: looks.logger)
        watch.start(onChange: looks.look)
        XCTAssertTrue(FileManager.default.createFile(atPath: directory + "/store.json", contents: Data("{}".utf8)))
        XCTAssertTrue(waitUntil(timeout: 10) { looks.value >= 1 }, "a change is looked at")
        XCTAssertTrue(looks.log.isEmpty, "\(looks.log)")
        watch.stop()
        watch.stop()  // idempotent
        XCTAssertTrue(FileManager.default.createFile(atPath: directory + "/store.json", contents: Data("[]".utf8)))
        XCTAssertTrue(staysAt(looks, for: 4 * RevocationWatch.checkInterval.timeInterval), "no look after stop")
    }

    func testARemovedDirectoryIsLookedAtEveryIntervalUntilStop() throws {
        let parent = try TemporaryDirectory.make(for: self, prefix: "cast-revocations")
        let directory = parent + "/state"
        XCTAssertEqual(mkdir(directory, 0o700), 0)
        let looks = Looks()
        let watch = RevocationWatch(directory: directory, logger: looks.logger)
        watch.start(onChange: looks.look)
        XCTAssertEqual(rmdir(directory), 0)
        // Once at the removal, then one a `checkInterval`.
        XCTAssertTrue(waitUntil(timeout: 10) { looks.value >= 4 }, "looked \(looks.value) times")
        XCTAssertTrue(
            looks.log.contains { $0.contains("was removed or moved; looking at the pairing store every") },
            "\(looks.log)")
        watch.stop()
        XCTAssertTrue(staysAt(looks, for: 4 * RevocationWatch.checkInterval.timeInterval), "no look after stop")
    }

    func testADirectoryThatCannotBeWatchedIsLookedAtEveryInterval() throws {
        let parent = try TemporaryDirectory.make(for: self, prefix: "cast-revocations")
        let looks = Looks()
        let watch = RevocationWatch(directory: parent + "/missing", logger: looks.logger)
        watch.start(onChange: looks.look)
        XCTAssertTrue(waitUntil(timeout: 10) { looks.value >= 3 }, "looked \(looks.value) times")
        XCTAssertTrue(looks.log.contains { $0.contains("cannot watch \(parent)/missing") }, "\(looks.log)")
        watch.stop()
        XCTAssertTrue(staysAt(looks, for: 4 * RevocationWatch.checkInterval.timeInterval), "no look after stop")
    }
}
