import CastProtocol
import CastTestSupport
import Foundation
import XCTest

/// A group on a Wi-Fi-like path (issue 33): each member reached through `scripts/jitter-relay`, which holds every chunk
/// of each direction for a random 1 to 8 ms (order kept, the two directions drawn apart: an asymmetric path, as
/// Wi-Fi's is; this kernel has no netem). The clock exchanges, the scheduled start and the alignments all cross it.
extension GroupTests {
    /// `cast send FILE --to RELAY1 --to RELAY2 --to RELAY3` over the jittery relays: every member plays the whole
    /// minute (no decoder worker stopped: before issue 33 a member's trim crossed the worker channel's limit about
    /// three seconds in), and the members stay in step, measured from outside castd as the drift test measures it
    /// (each beep's arrival in each member's capture).
    ///
    /// `CAST_JITTER_SECONDS` (60 to 3600) plays longer.
    func testAGroupOnAJitteryAsymmetricPathPlaysToTheEndInStep() throws {
        let length = min(max(Int(ProcessInfo.processInfo.environment["CAST_JITTER_SECONDS"] ?? "") ?? 60, 60), 3600)
        let members = try startGroup()
        var relays: [String] = []
        for (index, (member, host)) in zip(members, [Lab.Host.room1, .room2, .room3]).enumerated() {
            let target = "\(lab.address(host)):\(try member.daemon.listeningPort())"
            relays.append(try startJitterRelay(to: target, seed: index + 1))
        }
        let clip = try self.beeps(seconds: length)
        let sender = try lab.start(
            on: .phone, [Paths.cast, "send", clip] + relays.flatMap { ["--to", $0] },
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        XCTAssertEqual(sender.waitForExit(timeout: Double(length) + 90), 0, "\(sender.output)")
        XCTAssertTrue(sender.output.contains("finished: playbackEnded"), "\(sender.output)")
        XCTAssertFalse(sender.output.contains { $0.contains(" left") || $0.contains("failed") }, "\(sender.output)")
        var times: [[Double]] = []
        for member in members {
            XCTAssertFalse(
                member.daemon.output.contains { $0.contains("broke the channel's rules") }, "\(member.daemon.output)")
            let total = member.capture.stop(atLeast: Int(rate) * length).last?.total ?? 0
            XCTAssertEqual(Double(total) / rate, Double(length), accuracy: 0.1, "\(member.name): \(total) bytes")
            times.append(beepTimes(member.capture))
        }
        XCTAssertEqual(times.map(\.count), Array(repeating: length - 1, count: 3), "beeps found in each capture")
        let beeps = times.map(\.count).min() ?? 0
        guard beeps > 12 else { return }
        let spreads = (0..<beeps).map { k in times.map { $0[k] }.max()! - times.map { $0[k] }.min()! }
        print(
            "group over 1-8 ms jitter each way, spread of each beep (ms): "
                + spreads.map { String(format: "%.3f", $0 * 1000) }.joined(separator: " "))
        func quantiles(_ values: ArraySlice<Double>) -> (p50: Double, p99: Double, worst: Double) {
            let sorted = values.sorted()
            return (sorted[sorted.count / 2], sorted[Int(Double(sorted.count - 1) * 0.99)], sorted.last ?? 0)
        }
        let whole = quantiles(spreads[...])
        let settled = quantiles(spreads.dropFirst(10))
        print(
            String(
                format:
                    "group over 1-8 ms jitter each way, %d s: p50 %.3f ms, p99 %.3f ms, worst %.3f ms; from 10 s on: p50 %.3f ms, p99 %.3f ms, worst %.3f ms",
                length, whole.p50 * 1000, whole.p99 * 1000, whole.worst * 1000, settled.p50 * 1000,
                settled.p99 * 1000, settled.worst * 1000))
        // Twice the goal, for a loaded machine (the relay itself is a Python program sharing its cores): the goal,
        // 1 ms at p99, is a benchmark figure (docs/multiroom.md), not asserted here.
        XCTAssertLessThan(settled.p99, 0.002, "\(spreads)")
    }
}
