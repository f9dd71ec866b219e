internal import CSandbox
import CastProtocol
import Foundation
import Glibc

/// A decoder worker's CPU time limit that moves with playback: the worker may use at most `seconds` of CPU beyond
/// what it had used when playback last moved on. A fixed RLIMIT_CPU cannot work for a media player (a film decoded in
/// software legitimately takes hours of CPU), but a decoder that burns CPU while the position stands still (a file
/// built to make FFmpeg loop) is stopped: castd raises the worker's soft RLIMIT_CPU (prlimit) each time a position
/// event shows progress, and the kernel sends SIGXCPU at the soft limit (whose default action ends the worker).
/// Paused or stalled, a worker uses next to no CPU, so the limit is not reached.
///
/// Only the soft limit moves; the hard one is left as it is (unlimited, as castd's own). Lowering a hard limit is
/// for good: raising it again needs CAP_SYS_RESOURCE, which castd under systemd's DynamicUser, or in a container,
/// does not have, and a film that decoded for longer than the first budget was killed. The worker cannot raise its
/// own soft limit: its system call filter refuses every prlimit64 on RLIMIT_CPU.
///
/// Thread-safety: a value owned by the worker's reader thread (castd's side).
struct CPUBudget {
    let pid: pid_t
    /// CPU seconds allowed without progress.
    let seconds: Int
    private var lastPosition: Double?
    private var lastRenewal = 0.0
    /// The least time between two renewals (seconds).
    static let renewalInterval = 0.15

    /// The limit is set at once: `seconds` beyond what the worker has used starting (opening and probing the media
    /// come before any position).
    init(pid: pid_t, seconds: Int) {
        self.pid = pid
        self.seconds = seconds
        renew()
    }

    /// Renews the budget when `event` is a position other than the last one, at most every `renewalInterval`
    /// seconds (the engine reports positions five times a second). Between two renewals a worker may use what all
    /// the machine's cores give it in that time on top of the budget: renewing with every position keeps that small
    /// beside the budget on a machine with many cores (with a second between renewals, eight cores decoding a film
    /// could use 8 s, past a 3 s budget, while it moved on), and the floor bounds what a worker that floods castd
    /// with positions costs it.
    mutating func note(_ event: PlaybackEvent) {
        guard case .position(let position, _) = event, position != lastPosition else { return }
        lastPosition = position
        let now = Double(DispatchTime.now().uptimeNanoseconds) / 1e9
        guard now - lastRenewal >= Self.renewalInterval else { return }
        lastRenewal = now
        renew()
    }

    /// Sets the soft RLIMIT_CPU to the CPU time used so far plus the budget; the hard limit stays.
    private func renew() {
        guard let used = Self.cpuSeconds(of: pid) else { return }
        _ = cast_sandbox_set_cpu_limit(pid, UInt64(used + seconds))
    }

    /// The CPU time (user + system) a process has used, in whole seconds rounded up; nil when it is gone.
    static func cpuSeconds(of pid: pid_t) -> Int? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // After the command's closing parenthesis: state is field 3; utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        let ticks = max(Int(sysconf(Int32(_SC_CLK_TCK))), 1)
        return (user + system + ticks - 1) / ticks
    }
}
