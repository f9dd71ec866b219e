import Glibc

/// When castd starts the next spare decoder worker: once the session that took the last one has started. Executing
/// and linking a worker costs 16–60 ms of CPU on the 2-core bench machine (docs/performance.md); spent while a session
/// starts, it delays that session's first picture and competes with its read-ahead burst, but spent later than
/// needed it leaves the next session without a spare (about 100 ms more to its first frame). So the next spare starts
/// when the session that took the last one has shown its first picture (its engine started the clock: `playing`, or
/// `paused` when it starts paused) and its reads have paused for `quiet` (the read-ahead burst is over), or when it
/// ended, or at the latest `fallback` after it took its worker.
///
/// Only the latest session to take a worker counts: one that takes a worker while another starts replaces it (the
/// spare waits for the newest start, which is the one competing for the CPU now). Reports of other workers are ignored.
///
/// A value with time as an argument: no I/O, no clock of its own (`SpareWorker` carries out what it says).
struct SpareRefillRule {
    /// The latest a spare starts after a session took its worker, whatever that session says.
    static let fallback: Duration = .seconds(2)
    /// How long a started session's media reads must have paused before its start counts as over.
    static let quiet: Duration = .milliseconds(50)

    /// What to do about the next spare.
    enum Decision: Equatable {
        /// Start it now.
        case now
        /// Ask again at this time (or when the session reports something).
        case at(ContinuousClock.Instant)
    }

    /// The session whose start the next spare waits for.
    private struct Starting {
        let worker: pid_t
        let took: ContinuousClock.Instant
        var shown: ContinuousClock.Instant?
        var lastRead: ContinuousClock.Instant?
    }

    private var starting: Starting?

    /// A session took `worker` (the spare, or one started for it) at `now`: the next spare waits for its start.
    mutating func taken(by worker: pid_t, at now: ContinuousClock.Instant) {
        starting = Starting(worker: worker, took: now)
    }

    /// `worker`'s engine started its clock (the first picture is on screen, or the first sound plays).
    mutating func shown(by worker: pid_t, at now: ContinuousClock.Instant) {
        guard starting?.worker == worker, starting?.shown == nil else { return }
        starting?.shown = now
    }

    /// `worker` asked for media bytes.
    mutating func read(by worker: pid_t, at now: ContinuousClock.Instant) {
        guard starting?.worker == worker else { return }
        starting?.lastRead = now
    }

    /// `worker`'s session ended (finished, failed or stopped): nothing of its start is left to protect.
    mutating func ended(by worker: pid_t) {
        guard starting?.worker == worker else { return }
        starting = nil
    }

    /// Whether the next spare starts now, or when to ask again.
    func decision(at now: ContinuousClock.Instant) -> Decision {
        guard let starting else { return .now }
        var due = starting.took + Self.fallback
        if let shown = starting.shown {
            let settled = max(shown, starting.lastRead.map { $0 + Self.quiet } ?? shown)
            due = min(due, settled)
        }
        return now >= due ? .now : .at(due)
    }
}
