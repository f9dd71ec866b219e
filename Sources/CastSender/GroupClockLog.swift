import CastBase
import CastProtocol
import Glibc

/// Test and benchmark only: each member's clock estimate, once a second while the group plays (when it is aligned),
/// appended as one line per member to the file `CAST_TEST_CLOCK_LOG` names, so that a run on a jittery path shows
/// which member's estimate moved, when, and how sure the estimator was (scripts/bench-group-jitter reads it). Unset
/// (always, outside the lab): nothing is written.
///
/// A line: `CLOCK <our time, s> "<member>" offset <s> skew <ppm> bound <ms> rate <known|unknown>` (the name quoted,
/// `\"` and `\\` escaped, so that a name with spaces stays one field); and one per exchange the estimator took,
/// `EXCHANGE "<member>" <sent> <received> <replied> <returned>` (seconds, each side's clock), so that a run's
/// exchanges can be filtered again offline.
///
/// Thread safety: a value; each `record` opens, appends and closes (a few lines a second), so calls from any thread
/// are safe (the group calls it from its clock timer's queue only).
struct GroupClockLog: Sendable {
    /// The file appended to.
    let path: String

    /// The log `CAST_TEST_CLOCK_LOG` asks for; nil when it is unset or empty.
    static let configured: GroupClockLog? = {
        guard let value = getenv("CAST_TEST_CLOCK_LOG"), value.pointee != 0 else { return nil }
        return GroupClockLog(path: String(cString: value))
    }()

    /// One exchange of a member's clock, as its estimator took it.
    func record(_ exchange: ClockEstimator.Exchange, of member: String) {
        guard let file = fopen(path, "a") else { return }
        defer { fclose(file) }
        fputs(
            "EXCHANGE \"\(Self.quoted(member))\" \(exchange.sent) \(exchange.received) \(exchange.replied) "
                + "\(exchange.returned)\n", file)
    }

    /// A name with `\` and `"` escaped.
    private static func quoted(_ name: String) -> String {
        String(name.flatMap { $0 == "\\" || $0 == "\"" ? ["\\", $0] : [$0] })
    }

    /// One line per member: `now` (our clock, ns), its name and its estimate (members without one are left out).
    func record(at now: Int64, _ members: [(name: String, estimate: ClockEstimator.Estimate)]) {
        guard !members.isEmpty, let file = fopen(path, "a") else { return }
        defer { fclose(file) }
        for (name, estimate) in members {
            let seconds = Double(now) / 1e9
            let offset = estimate.theirs(atOurs: seconds) - seconds
            let line =
                "CLOCK \(seconds) \"\(Self.quoted(name))\" offset \(offset) skew \(estimate.skew * 1e6) "
                + "bound \(estimate.uncertainty * 1e3) rate \(estimate.rateKnown ? "known" : "unknown")\n"
            fputs(line, file)
        }
    }
}
