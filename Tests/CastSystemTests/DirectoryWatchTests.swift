import CastSystem
import CastTestSupport
import Foundation
import Synchronization
import XCTest

/// The inotify watch castd's revocation watcher waits on: each way the pairing store changes ends a wait, `close()`
/// ends one from another thread, and a removed directory is reported, not waited on forever.
final class DirectoryWatchTests: XCTestCase {
    /// `wait()` on a thread of its own; the test fails instead of hanging when it does not return within `timeout`.
    private func waitInBackground(_ watch: DirectoryWatch, timeout: TimeInterval = 5) -> () -> DirectoryWatch.Event? {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<DirectoryWatch.Event?>(nil)
        Thread.detachNewThread {
            let event = watch.wait()
            result.withLock { $0 = event }
            done.signal()
        }
        return {
            guard done.wait(timeout: .now() + timeout) == .success else { return nil }
            return result.withLock { $0 }
        }
    }

    func testReplacingAFileByRenameEndsAWait() throws {
        let directory = try TemporaryDirectory.make(for: self, prefix: "cast-system")
        let watch = try DirectoryWatch(directory: directory)
        defer { watch.close() }
        XCTAssertTrue(FileManager.default.createFile(atPath: directory + "/store.tmp", contents: Data("{}".utf8)))
        // Creating the temporary file was a change already: the first wait returns at once with it.
        XCTAssertEqual(waitInBackground(watch)(), .changed)
        let next = waitInBackground(watch)
        XCTAssertEqual(rename(directory + "/store.tmp", directory + "/store.json"), 0)
        XCTAssertEqual(next(), .changed)
    }

    func testWritingInPlaceAndChangingTheModeEachEndAWait() throws {
        let directory = try TemporaryDirectory.make(for: self, prefix: "cast-system")
        let path = directory + "/paired-senders.json"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data("{}".utf8)))
        let watch = try DirectoryWatch(directory: directory)
        defer { watch.close() }

        let written = waitInBackground(watch)
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        handle.write(Data("{\"senders\":[]}".utf8))
        try handle.close()
        XCTAssertEqual(written(), .changed)

        let changedMode = waitInBackground(watch)
        XCTAssertEqual(chmod(path, 0o644), 0)
        XCTAssertEqual(changedMode(), .changed)
    }

    func testCloseEndsAWaitInProgressAndEveryLaterOne() throws {
        let directory = try TemporaryDirectory.make(for: self, prefix: "cast-system")
        let watch = try DirectoryWatch(directory: directory)
        let waiting = waitInBackground(watch)
        usleep(50_000)  // most likely inside poll(2) by now; either way the wait must end
        watch.close()
        XCTAssertEqual(waiting(), .closed)
        XCTAssertEqual(watch.wait(), .closed)
        watch.close()  // idempotent
    }

    func testARemovedDirectoryIsReportedAsGone() throws {
        let parent = try TemporaryDirectory.make(for: self, prefix: "cast-system")
        let directory = parent + "/state"
        XCTAssertEqual(mkdir(directory, 0o700), 0)
        let watch = try DirectoryWatch(directory: directory)
        defer { watch.close() }
        let waiting = waitInBackground(watch)
        XCTAssertEqual(rmdir(directory), 0)
        // The removal may come as a change of the directory first; the wait after it reports the directory gone.
        var event = waiting()
        if event == .changed { event = waitInBackground(watch)() }
        XCTAssertEqual(event, .directoryGone)
    }

    func testAPathThatIsNotADirectoryIsRefused() throws {
        let directory = try TemporaryDirectory.make(for: self, prefix: "cast-system")
        XCTAssertTrue(FileManager.default.createFile(atPath: directory + "/file", contents: Data()))
        for path in [directory + "/file", directory + "/missing"] {
            XCTAssertThrowsError(try DirectoryWatch(directory: path)) { error in
                XCTAssertEqual((error as? SecurityError)?.kind, .system, "\(path): \(error)")
            }
        }
    }
}
