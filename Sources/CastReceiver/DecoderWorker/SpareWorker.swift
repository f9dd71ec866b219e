import Foundation
import Glibc

/// One decoder worker started ahead of time, waiting for its start message, so that a session does not wait for
/// castd to be executed and linked again (about 0.1 s of the time to the first frame). A session takes it and the
/// next one is started in the background once that session has started (`SpareRefillRule`: its first picture shown
/// and its read-ahead burst over, or at the latest 2 s after). A spare has confined itself (death with castd, no new
/// privileges, no descriptors of castd's) and entered its sandbox (hidden state directory, no capabilities, the
/// system call filter), but not yet set the session's limits.
///
/// Thread-safety: `spare`, `spawning`, `closed`, `rule`, `checkAt`, `sandbox` and `onFirstReport` are guarded by
/// `condition`; spawning happens on `WorkerProcess`'s spawner thread.
final class SpareWorker: @unchecked Sendable {
    // Invariant: every `var` is read and written only under `condition`.
    static let shared = SpareWorker()
    private let condition = NSCondition()
    private var spare: (pid: pid_t, channel: Int32)?
    /// A spare is being started on a background thread (a session that finds none waits for it).
    private var spawning = false
    /// castd is stopping: no spare is kept or started any more.
    private var closed = false
    /// When the next spare starts.
    private var rule = SpareRefillRule()
    /// The earliest time a look at `rule` is already scheduled for.
    private var checkAt: ContinuousClock.Instant?
    private var sandbox = WorkerSandbox(hiddenPaths: [])
    /// Told what the first worker's sandbox came to, then dropped (castd says it once, at start).
    private var onFirstReport: (@Sendable (SandboxReport) -> Void)?
    /// Where spares are started and the rule's times are waited for.
    private let queue = DispatchQueue(label: "castd.spare-worker")

    /// How long a new worker may take to start and enter its sandbox.
    static let confineTimeout = 10

    /// What every worker started from now on hides, and who hears what the first one's sandbox came to.
    func configure(sandbox: WorkerSandbox, onFirstReport: @escaping @Sendable (SandboxReport) -> Void) {
        condition.withLock {
            self.sandbox = sandbox
            self.onFirstReport = onFirstReport
        }
    }

    /// A worker for a session: the spare if it is still alive, the one being started if one is (it is nearer ready
    /// than a worker started now), otherwise one started now. The next spare starts when this session has started
    /// (`SpareRefillRule`). The worker is sandboxed and waits for its start message on `channel`, which the caller
    /// now owns.
    func take() throws -> (pid: pid_t, channel: Int32) {
        defer { check() }
        let ready = condition.withLock { () -> (pid: pid_t, channel: Int32)? in
            let deadline = Date(timeIntervalSinceNow: Double(Self.confineTimeout))
            while spare == nil, spawning, !closed {
                if !condition.wait(until: deadline) { break }
            }
            defer { spare = nil }
            return spare
        }
        var worker: (pid: pid_t, channel: Int32)?
        if let ready {
            var status: Int32 = 0
            if waitpid(ready.pid, &status, WNOHANG) == 0 {
                worker = ready
            } else {
                // It died while it waited (killed by someone): reaped here, and replaced.
                _ = Glibc.close(ready.channel)
            }
        }
        let taken = try worker ?? start()
        condition.withLock { rule.taken(by: taken.pid, at: .now) }
        return taken
    }

    /// `worker`'s engine started its clock: its first picture is shown (or its first sound plays).
    func noteShown(by worker: pid_t) {
        condition.withLock { rule.shown(by: worker, at: .now) }
        check()
    }

    /// `worker` asked for media bytes (its start is not over while it reads ahead without a pause).
    func noteRead(by worker: pid_t) {
        condition.withLock { rule.read(by: worker, at: .now) }
    }

    /// `worker`'s session is over.
    func noteEnded(by worker: pid_t) {
        condition.withLock { rule.ended(by: worker) }
        check()
    }

    /// Starts a spare in the background unless one is ready or coming, or the session that took the last one is still
    /// starting (then looks again when it is due). castd calls this once at start.
    func refill() { check() }

    /// Carries out the rule: starts the next spare now, or looks again when the rule says.
    private func check() {
        let now = ContinuousClock.now
        let decision = condition.withLock { () -> SpareRefillRule.Decision? in
            guard spare == nil, !spawning, !closed else { return nil }
            let decision = rule.decision(at: now)
            switch decision {
            case .now:
                spawning = true
            case .at(let due):
                if let checkAt, checkAt <= due { return nil }
                checkAt = due
            }
            return decision
        }
        switch decision {
        case nil: return
        case .now: queue.async { self.spawnSpare() }
        case .at(let due):
            let wait = due - now
            let nanoseconds = wait.components.seconds * 1_000_000_000 + wait.components.attoseconds / 1_000_000_000
            queue.asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) { [self] in
                condition.withLock { if checkAt == due { checkAt = nil } }
                check()
            }
        }
    }

    private func spawnSpare() {
        let made = try? start()
        condition.withLock {
            spawning = false
            if let made, spare == nil, !closed {
                spare = made
            } else if let made {
                // castd stopped meanwhile: never leave a worker unowned.
                Self.end(made)
            }
            condition.broadcast()
        }
    }

    /// Ends the spare, if any, and keeps none from now on (castd is stopping).
    func close() {
        let current = condition.withLock { () -> (pid: pid_t, channel: Int32)? in
            closed = true
            condition.broadcast()
            defer { spare = nil }
            return spare
        }
        if let current { Self.end(current) }
    }

    /// Kills a worker that has no session, reaps it, and closes castd's end of its channel.
    private static func end(_ worker: (pid: pid_t, channel: Int32)) {
        kill(worker.pid, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(worker.pid, &status, 0)
        _ = Glibc.close(worker.channel)
    }

    /// Starts a worker and waits until it has entered its sandbox (`confine`, answered by `confined`); a worker that
    /// does not answer in time, or says anything else, is killed.
    private func start() throws -> (pid: pid_t, channel: Int32) {
        let (mine, theirs) = try WorkerChannel.socketPair()
        let pid: pid_t
        do {
            defer { _ = Glibc.close(theirs) }
            pid = try WorkerProcess.spawn(channel: theirs)
        } catch {
            _ = Glibc.close(mine)
            throw error
        }
        let channel = WorkerChannel(
            fd: mine, incoming: WorkerMessage.maximumFromWorker, decode: WorkerMessage.fromConfiningWorker)
        channel.setSendTimeout(seconds: 5)
        let sandbox = condition.withLock { self.sandbox }
        let answer: WorkerMessage?
        do {
            try channel.send(.confine(sandbox))
            channel.setReceiveTimeout(seconds: Self.confineTimeout)
            answer = try channel.receive()
            channel.setReceiveTimeout(seconds: 0)
        } catch {
            answer = nil
        }
        guard case .confined(let report)? = answer, let fd = channel.releaseDescriptor() else {
            channel.shutdown()
            let end = WorkerProcess.reap(pid, grace: .zero)
            throw WorkerFailure("the decoder process did not enter its sandbox: it \(end.text)")
        }
        let hook = condition.withLock { () -> (@Sendable (SandboxReport) -> Void)? in
            defer { onFirstReport = nil }
            return onFirstReport
        }
        hook?(report)
        return (pid, fd)
    }
}
