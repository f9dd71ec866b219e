import CastProtocol
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
