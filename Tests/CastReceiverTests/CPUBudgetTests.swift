import Foundation
import XCTest

@testable import CastReceiver

/// The decoder worker's CPU budget moves only the soft RLIMIT_CPU: the hard limit stays as it was (unlimited), so the
/// budget can be renewed for as long as playback moves on, also without CAP_SYS_RESOURCE (which raising a hard limit
/// needs, and castd under DynamicUser or in a container does not have: a film that decoded for more than the first
/// budget plus 5 s was killed).
final class CPUBudgetTests: XCTestCase {
    /// The soft and hard RLIMIT_CPU of `pid` as /proc shows them ("unlimited" or seconds).
    private func cpuLimit(of pid: pid_t) throws -> (soft: String, hard: String) {
        let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        let line = try XCTUnwrap(limits.split(separator: "\n").first { $0.hasPrefix("Max cpu time") })
        let fields = line.dropFirst("Max cpu time".count).split(separator: " ")
        return (String(fields[0]), String(fields[1]))
    }

    func testOnlyTheSoftLimitMovesAndItMovesOnPastTheFirstBudget() throws {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/sleep")
        child.arguments = ["30"]
        try child.run()
        defer {
            child.terminate()
            child.waitUntilExit()
        }
        let pid = child.processIdentifier
        XCTAssertEqual(try cpuLimit(of: pid).hard, "unlimited", "the test needs a child without a CPU limit")
        var budget = CPUBudget(pid: pid, seconds: 2)
        XCTAssertEqual(try cpuLimit(of: pid).soft, "\(2 + (CPUBudget.cpuSeconds(of: pid) ?? 0))")
        XCTAssertEqual(try cpuLimit(of: pid).hard, "unlimited", "the hard limit was lowered")
        // A renewal later (playback moved on) may go past the first budget plus anything: nothing is lowered for good.
        let renewed = CPUBudget(pid: pid, seconds: 3600)
        XCTAssertEqual(try cpuLimit(of: pid).soft, "\(3600 + (CPUBudget.cpuSeconds(of: pid) ?? 0))")
        XCTAssertEqual(try cpuLimit(of: pid).hard, "unlimited")
        budget.note(.position(seconds: 1, at: 0))
        _ = renewed
    }
}
