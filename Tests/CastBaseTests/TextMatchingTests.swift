import CastBase
import Foundation
import Synchronization
import XCTest

/// The string helpers that stand in for NSString's in the sender, each against what NSString answers, and the thread
/// starter that stands in for Foundation's `Thread`.
final class TextMatchingTests: XCTestCase {
    func testTrimmedMatchesNSStringsTrimmingOfWhiteSpace() {
        for text in ["  a b  ", "\ta\t", "", "   ", "x", " é ", "\u{00A0}nbsp\u{00A0}"] {
            XCTAssertEqual(text.trimmed(), text.trimmingCharacters(in: .whitespaces), text.debugDescription)
        }
        XCTAssertEqual("line\n".trimmed(), "line", "a line's end is white space too")
    }

    /// `cast list` orders names as people do (issue #29): numbers by value, case aside.
    func testNamesSortAsPeopleOrderThem() {
        let names = [
            "Room 10", "room 3", "Room 2", "Kitchen", "Room 1", "Room", "Den 2b", "Den 2a", "Den 10", "Room 02",
            "kitchen",
            "Ärmel", "Room 2 Left", "Room 9999999999999999999999", "Room 10000000000000000000000",
        ]
        XCTAssertEqual(
            names.sorted(by: precedesNaturally),
            [
                "Den 2a", "Den 2b", "Den 10", "Kitchen", "kitchen", "Room", "Room 1", "Room 02", "Room 2",
                "Room 2 Left",
                "room 3", "Room 10", "Room 9999999999999999999999", "Room 10000000000000000000000", "Ärmel",
            ])
        XCTAssertEqual(compareNaturally("Room 2", "Room 10"), -1)
        XCTAssertEqual(compareNaturally("Room 10", "Room 2"), 1)
        XCTAssertEqual(compareNaturally("ROOM 2", "room 02"), 0, "case and leading zeros alone are a tie")
        XCTAssertEqual(compareNaturally("", ""), 0)
        XCTAssertEqual(compareNaturally("", "a"), -1)
        XCTAssertEqual(compareNaturally("a1", "a"), 1)
        XCTAssertFalse(precedesNaturally("Room 2", "Room 2"), "irreflexive")
    }

    func testCaseInsensitiveMatchAgreesWithNSString() {
        let pairs = [
            ("Living Room", "living room"), ("KITCHEN", "kitchen"), ("Čajovna", "čajovna"), ("Ωmega", "ωmega"),
            ("Kitchen", "Kitchen 2"), ("a", "b"), ("e\u{301}", "\u{E9}"),
        ]
        for (one, other) in pairs {
            XCTAssertEqual(
                one.matchesIgnoringCase(other), one.caseInsensitiveCompare(other) == .orderedSame, "\(one) / \(other)")
        }
    }

    func testLastPathComponentAgreesWithNSString() {
        for path in ["/a/b/movie.mp4", "movie.mp4", "/a/b/", "/", "", "a//b", "/tmp/x.tmp-1"] {
            XCTAssertEqual(path.lastPathComponent, (path as NSString).lastPathComponent, path)
        }
    }

    func testADetachedThreadRunsUnderItsName() throws {
        let seen = Monitor<String?>(nil)
        startDetachedThread(name: "cast test thread with a long name") {
            let name = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
            seen.withLock { $0 = name ?? "?" }
        }
        let name = seen.withLock(when: { $0 != nil }, timeout: 10) { $0 }
        XCTAssertEqual(name, "cast test threa\n", "the kernel keeps 15 bytes of the name")
    }
}
