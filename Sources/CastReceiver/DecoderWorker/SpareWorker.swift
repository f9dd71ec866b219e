import Foundation
import Glibc

/// One decoder worker started ahead of time, waiting for its start message, so that a session does not wait for
/// castd to be executed and linked again (about 0.1 s of the time to the first frame). A session takes it and a new
/// one is started in the background. A spare has confined itself (death with castd, no new privileges, no
/// descriptors of castd's) but not yet set the session's limits.
///
/// Thread-safety: `spare` is guarded by `lock`; spawning happens on `WorkerProcess`'s spawner thread.
final class SpareWorker: @unchecked Sendable {
    // Invariant: `spare`, `refilling` and `closed` are read and written only under `lock`.
    static let shared = SpareWorker()
    private let lock = NSLock()
    private var spare: (pid: pid_t, channel: Int32)?
    private var refilling = false
    /// castd is stopping: no spare is kept or started any more.
    private var closed = false

    /// A worker for a session: the spare if it is still alive, otherwise one started now. Starts the next spare.
    func take() throws -> (pid: pid_t, channel: Int32) {
        let ready = lock.withLock { () -> (pid: pid_t, channel: Int32)? in
            defer { spare = nil }
            return spare
        }
        defer { refill() }
        if let ready {
            var status: Int32 = 0
            if waitpid(ready.pid, &status, WNOHANG) == 0 { return ready }
            // It died while it waited (killed by someone): reaped here, and replaced.
            _ = Glibc.close(ready.channel)
        }
        return try Self.start()
    }

    /// Starts a spare in the background unless one is ready or coming.
    func refill() {
        let go = lock.withLock { () -> Bool in
            guard spare == nil, !refilling, !closed else { return false }
            refilling = true
            return true
        }
        guard go else { return }
        DispatchQueue.global().async { [self] in
            let made = try? Self.start()
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

    private static func start() throws -> (pid: pid_t, channel: Int32) {
        let (mine, theirs) = try WorkerChannel.socketPair()
        defer { _ = Glibc.close(theirs) }
        do {
            return (try WorkerProcess.spawn(channel: theirs), mine)
        } catch {
            _ = Glibc.close(mine)
            throw error
        }
    }
}
