import CastBase
import CastProtocol
import Foundation
import Glibc

/// One decoder worker started ahead of time, waiting for its start message, so that a session does not wait for
/// castd to be executed and linked again (about 0.1 s of the time to the first frame). A session takes it and the
/// next one is started in the background once that session has started (`SpareRefillRule`: its first picture shown
/// and its read-ahead burst over, or at the latest 2 s after). A spare has confined itself (death with castd, no new
/// privileges, no descriptors of castd's) and entered its sandbox (hidden state directory, no capabilities, the
/// system call filter), but not yet set the session's limits.
///
/// Thread-safety: the spare, the rule and the settings are in a `Monitor` (a session that finds a spare being started
/// waits on it); spawning happens on `WorkerProcess`'s spawner thread.
final class SpareWorker: Sendable {
    static let shared = SpareWorker()

    private struct State {
        var spare: StartedWorker?
        /// A spare is being started on a background thread (a session that finds none waits for it).
        var spawning = false
        /// castd is stopping: no spare is kept or started any more.
        var closed = false
        /// When the next spare starts.
        var rule = SpareRefillRule()
        /// The earliest time a look at `rule` is already scheduled for.
        var checkAt: ContinuousClock.Instant?
        var sandbox = WorkerSandbox(hiddenPaths: [])
        /// Told what the first worker's sandbox came to, then dropped (castd says it once, at start).
        var onFirstReport: (@Sendable (SandboxReport) -> Void)?
    }

    private let state = Monitor(State())
    /// Where spares are started and the rule's times are waited for.
    private let queue = DispatchQueue(label: "castd.spare-worker")

    /// How long a new worker may take to start and enter its sandbox.
    static let confineTimeout = 10

    /// What every worker started from now on hides, and who hears what the first one's sandbox came to.
    func configure(sandbox: WorkerSandbox, onFirstReport: @escaping @Sendable (SandboxReport) -> Void) {
        state.withLock {
            $0.sandbox = sandbox
            $0.onFirstReport = onFirstReport
        }
    }

    /// A worker for a session: the spare if it is still alive, the one being started if one is (it is nearer ready
    /// than a worker started now), otherwise one started now. The next spare starts when this session has started
    /// (`SpareRefillRule`). The worker is sandboxed and waits for its start message on `channel`, which the caller
    /// now owns. A session that needs the display otherwise than the spares have it (`configure`: spares have it
    /// when castd shows video in a window; a thumbnail worker never needs it) gets a worker started now for it.
    func take(display: Bool) throws -> StartedWorker {
        let sandbox = state.withLock { $0.sandbox }
        if sandbox.display != display { return try start(sandbox.with(display: display)) }
        defer { check() }
        let settled = { (state: State) in state.spare != nil || !state.spawning || state.closed }
        let ready = state.withLock(when: settled, timeout: Double(Self.confineTimeout)) {
            state -> StartedWorker? in
            defer { state.spare = nil }
            return state.spare
        }
        var worker: StartedWorker?
        if let ready {
            var status: Int32 = 0
            if waitpid(ready.pid, &status, WNOHANG) == 0 {
                worker = ready
            } else {
                // It died while it waited (killed by someone): reaped here, and replaced.
                _ = Glibc.close(ready.channel)
                ready.closeListener()
            }
        }
        let taken = try worker ?? start(sandbox)
        state.withLock { $0.rule.taken(by: taken.pid, at: .now) }
        return taken
    }

    /// `worker`'s engine started its clock: its first picture is shown (or its first sound plays).
    func noteShown(by worker: pid_t) {
        state.withLock { $0.rule.shown(by: worker, at: .now) }
        check()
    }

    /// `worker` asked for media bytes (its start is not over while it reads ahead without a pause).
    func noteRead(by worker: pid_t) {
        state.withLock { $0.rule.read(by: worker, at: .now) }
    }

    /// `worker`'s session is over.
    func noteEnded(by worker: pid_t) {
        state.withLock { $0.rule.ended(by: worker) }
        check()
    }

    /// Starts a spare in the background unless one is ready or coming, or the session that took the last one is still
    /// starting (then looks again when it is due). castd calls this once at start.
    func refill() { check() }

    /// Carries out the rule: starts the next spare now, or looks again when the rule says.
    private func check() {
        let now = ContinuousClock.now
        let decision = state.withLock { state -> SpareRefillRule.Decision? in
            guard state.spare == nil, !state.spawning, !state.closed else { return nil }
            let decision = state.rule.decision(at: now)
            switch decision {
            case .now:
                state.spawning = true
            case .at(let due):
                if let checkAt = state.checkAt, checkAt <= due { return nil }
                state.checkAt = due
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
                state.withLock { if $0.checkAt == due { $0.checkAt = nil } }
                check()
            }
        }
    }

    private func spawnSpare() {
        let made = try? start(state.withLock { $0.sandbox })
        let unowned = state.withLock { state -> StartedWorker? in
            state.spawning = false
            guard let made, state.spare == nil, !state.closed else { return made }
            state.spare = made
            return nil
        }
        // castd stopped meanwhile: never leave a worker unowned.
        if let unowned { Self.end(unowned) }
    }

    /// Ends the spare, if any, and keeps none from now on (castd is stopping).
    func close() {
        let current = state.withLock { state -> StartedWorker? in
            state.closed = true
            defer { state.spare = nil }
            return state.spare
        }
        if let current { Self.end(current) }
    }

    /// Kills a worker that has no session, reaps it, and closes castd's end of its channel.
    private static func end(_ worker: StartedWorker) {
        kill(worker.pid, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(worker.pid, &status, 0)
        _ = Glibc.close(worker.channel)
        worker.closeListener()
    }

    /// Starts a worker and waits until it has entered its sandbox (`confine`, answered by `confined`); a worker that
    /// does not answer in time, or says anything else, is killed.
    private func start(_ sandbox: WorkerSandbox) throws -> StartedWorker {
        let (mine, theirs) = try WorkerChannel.socketPair()
        let pid: pid_t
        do {
            defer { _ = Glibc.close(theirs) }
            pid = try WorkerProcess.spawn(channel: theirs, display: sandbox.display)
        } catch {
            _ = Glibc.close(mine)
            throw error
        }
        let channel = WorkerChannel(
            fd: mine, incoming: WorkerMessage.maximumFromWorker, decode: WorkerMessage.fromConfiningWorker)
        channel.setSendTimeout(seconds: 5)
        let answer: WorkerMessage?
        var listener: Int32?
        do {
            try channel.send(.confine(sandbox))
            channel.setReceiveTimeout(seconds: Self.confineTimeout)
            // The listener on the worker's loopback comes first, as one byte with the descriptor (SCM_RIGHTS).
            listener = try WorkerSandbox.receiveListener(over: mine)
            answer = try channel.receive()
            channel.setReceiveTimeout(seconds: 0)
        } catch {
            answer = nil
        }
        guard case .confined(let report)? = answer, let fd = channel.releaseDescriptor() else {
            if let listener { _ = Glibc.close(listener) }
            channel.shutdown()
            let end = WorkerProcess.reap(pid, grace: .zero)
            throw WorkerFailure("the decoder process did not enter its sandbox: it \(end.text)")
        }
        let hook = state.withLock { state -> (@Sendable (SandboxReport) -> Void)? in
            defer { state.onFirstReport = nil }
            return state.onFirstReport
        }
        hook?(report)
        return StartedWorker(pid: pid, channel: fd, listener: listener, report: report)
    }
}

/// A decoder worker that has entered its sandbox and waits for its start message.
struct StartedWorker: Sendable {
    var pid: pid_t
    /// castd's end of the channel, owned by whoever holds the worker.
    var channel: Int32
    /// The listener the worker opened on its own loopback and handed over (`WorkerSandbox.handOver`), for castd's
    /// proxy of a URL session (`network(for:access:)`, which takes it); nil when the worker sent none.
    var listener: Int32?
    /// What its sandbox came to.
    var report: SandboxReport

    /// Closes the listener: the worker then has nothing to connect to. Once, by the worker's holder.
    func closeListener() {
        if let listener { _ = Glibc.close(listener) }
    }
}
