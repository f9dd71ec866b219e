import Foundation
import XCTest

/// The harness's own promise, which every end-to-end test leans on: once a program has exited, all it wrote has
/// been read. (A process's exit is seen before the reader thread has taken the last lines from the pipe; a test
/// that read `output.last` right after the exit got an earlier line once in a CI run.)
final class HarnessTests: XCTestCase {
    private static let lines = 3000
    private static let script = "seq 1 \(lines); printf 'no newline at the end'"

    func testADaemonsOutputIsCompleteOnceItHasExited() throws {
        for run in 0..<40 {
            let daemon = try Daemon(["/bin/sh", "-c", Self.script], environment: [:])
            XCTAssertEqual(daemon.waitForExit(timeout: 10), 0)
            let output = daemon.output
            XCTAssertEqual(output.count, Self.lines + 1, "run \(run): \(output.suffix(2))")
            XCTAssertEqual(output.last, "no newline at the end", "run \(run)")
            if output.count != Self.lines + 1 { return }
        }
    }

    func testACommandsOutputIsCompleteOnceItHasExited() throws {
        for run in 0..<40 {
            let result = try runCommand(["/bin/sh", "-c", "{ \(Self.script); } >&2; seq 1 \(Self.lines)"])
            XCTAssertEqual(result.status, 0)
            XCTAssertEqual(result.stdout.split(separator: "\n").count, Self.lines, "run \(run)")
            XCTAssertTrue(result.stderr.hasSuffix("\(Self.lines)\nno newline at the end"), "run \(run)")
        }
    }
}
