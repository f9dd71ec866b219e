import XCTest

@testable import CastReceiver

/// What castd's log says of a decoder worker's sandbox: each part in force at info, each missing at warning.
final class SandboxReportLogTests: XCTestCase {
    /// All of it in force: three lines at info, none of the display (only a missing part is said).
    func testASandboxInForceIsSaidAtInfo() {
        let lines = SandboxReport().logLines
        XCTAssertEqual(lines.map(\.0), [.info, .info, .info])
        XCTAssertEqual(
            lines.map(\.1),
            [
                "decoder sandbox: the state directory is hidden from decoder workers (private mount namespace)",
                "decoder sandbox: decoder workers have no network but their own loopback (URLs through castd's proxy)",
                "decoder sandbox: system call filter on (seccomp)",
            ])
    }

    /// Each missing part is a warning with its reason, in the same order.
    func testEachMissingPartIsAWarningWithItsReason() {
        let report = SandboxReport(
            mountProblem: "EPERM", filterProblem: "no seccomp", networkProblem: "no netns", displayProblem: "no ipc")
        let lines = report.logLines
        XCTAssertEqual(lines.map(\.0), [.warning, .warning, .warning, .warning])
        XCTAssertEqual(
            lines.map(\.1),
            [
                "decoder sandbox: no private mount namespace (EPERM): a compromised decoder could read the state "
                    + "directory",
                "decoder sandbox: no private network (no netns): AirPlay clients' URLs are refused, and a compromised "
                    + "decoder could connect wherever castd can",
                "decoder sandbox: workers without a window share castd's System V IPC (no ipc)",
                "decoder sandbox: no system call filter (no seccomp)",
            ])
    }
}
