import Foundation
import Glibc

/// One decoder worker started ahead of time, waiting for its start message, so that a session does not wait for
/// castd to be executed and linked again (about 0.1 s of the time to the first frame). A session takes it and a new
/// one is started in the background. A spare has confined itself (death with castd, no new privileges, no
/// descriptors of castd's) and entered its sandbox (hidden state directory, no capabilities, the system call
/// filter), but not yet set the session's limits.
///
/// Thread-safety: `spare`, `refilling`, `closed`, `sandbox` and `onFirstReport` are guarded by `lock`; spawning
/// happens on `WorkerProcess`'s spawner thread.
final class SpareWorker: @unchecked Sendable {
    // Invariant: every `var` is read and written only under `lock`.
    static let shared = SpareWorker()
    private let lock = NSLock()
    private var spare: (pid: pid_t, channel: Int32)?
    private var refilling = false
    /// castd is stopping: no spare is kept or started any more.
    private var closed = false
    private var sandbox = WorkerSandbox(hiddenPaths: [])
    /// Told what the first worker's sandbox came to, then dropped (castd says it once, at start).
    private var onFirstReport: (@Sendable (SandboxReport) -> Void)?

    /// How long a new worker may take to start and enter its sandbox.
    static let confineTimeout = 10

    /// What every worker started from now on hides, and who hears what the first one's sandbox came to.
    func configure(sandbox: WorkerSandbox, onFirstReport: @escaping @Sendable (SandboxReport) -> Void) {
        lock.withLock {
            self.sandbox = sandbox
            self.onFirstReport = onFirstReport
        }
    }

    /// A worker for a session: the spare if it is still alive, otherwise one started now. Starts the next spare.
    /// The worker is sandboxed and waits for its start message on `channel`, which the caller now owns.
    func take() throws -> (pid: pid_t, channel: Int32) {
        let ready = lock.withLock { () -> (pid: pid_t, channel: Int32)? in
            defer { spare = nil }
            return spare
        }
        defer { refill(after: Self.refillDelay) }
        if let ready {
            var status: Int32 = 0
            if waitpid(ready.pid, &status, WNOHANG) == 0 { return ready }
            // It died while it waited (killed by someone): reaped here, and replaced.
            _ = Glibc.close(ready.channel)
        }
        return try start()
    }

    /// How long after a session took the spare the next one starts: not while the session starts, whose first
    /// picture and media read-ahead burst would share the CPU with executing and linking a process nobody needs yet
    /// (16–60 ms of CPU on the 2-core bench machine; docs/performance.md). A session that starts sooner than this
    /// after another waits for a worker of its own, as it did before spares.
    static let refillDelay: DispatchTimeInterval = .seconds(2)

    /// Starts a spare in the background (after `delay`) unless one is ready or coming.
    func refill(after delay: DispatchTimeInterval = .seconds(0)) {
        let go = lock.withLock { () -> Bool in
            guard spare == nil, !refilling, !closed else { return false }
            refilling = true
            return true
        }
        guard go else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [self] in
            // castd may have stopped while this waited.
            let wanted = lock.withLock { () -> Bool in
                if closed || spare != nil { refilling = false }
                return refilling
            }
            guard wanted else { return }
            let made = try? start()
            lock.withLock {
                refilling = false
                if let made, spare == nil, !closed {
                    spare = made
                } else if let made {
                    // castd stopped meanwhile (or, which cannot happen, another refill won): never leave a worker
                    // unowned.
                    Self.end(made)
                }
            }
        }
    }

    /// Ends the spare, if any, and keeps none from now on (castd is stopping).
    func close() {
        let current = lock.withLock { () -> (pid: pid_t, channel: Int32)? in
            closed = true
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
        let sandbox = lock.withLock { self.sandbox }
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
        let hook = lock.withLock { () -> (@Sendable (SandboxReport) -> Void)? in
            defer { onFirstReport = nil }
            return onFirstReport
        }
        hook?(report)
        return (pid, fd)
    }
}
