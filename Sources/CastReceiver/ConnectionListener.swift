import CastBase
import CastSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// castd's listening socket and its door: accepts connections and gives each a thread, never waiting for a place.
/// `ConnectionDoor` (a value) decides at once whether a connection is served, refused (its source has its share of
/// unadmitted places) or served in place of the oldest unadmitted connection, which is closed; this carries it out.
///
/// Thread-safety: `Sendable`; the listening descriptor, the port, the door (with the wake-up descriptors it owns)
/// and whether `stop` was called live in a `Mutex`. Sockets are shut down and closed outside it.
final class ConnectionListener: Sendable {
    private struct State {
        var listenFD: Int32 = -1
        var port: UInt16 = 0
        var stopped = false
        var door: ConnectionDoor<Int32>
    }

    private let state: Mutex<State>
    private let logger: Logger
    /// Where the time that paces the log of connections turned away counts from.
    private let epoch = ContinuousClock.now

    /// A listener whose door keeps `limits`.
    init(limits: ConnectionAdmission.Limits, logger: Logger) {
        state = Mutex(State(door: ConnectionDoor(limits: limits)))
        self.logger = logger
    }

    /// The port it listens on, once listening.
    var port: UInt16 { state.withLock { $0.port } }

    /// Binds `host`:`port` (0: any free port). Returns the bound port.
    func listen(host: String, port: UInt16) throws -> UInt16 {
        let (fd, bound) = try TCP.listen(host: host, port: port)
        state.withLock {
            $0.listenFD = fd
            $0.port = bound
        }
        return bound
    }

    /// Accepts connections on a thread of its own until `stop`; each connection served runs `connection` (with the
    /// descriptor, the peer and its ticket) on a thread of its own.
    func serve(
        _ connection: @escaping @Sendable (_ fd: Int32, _ peer: String, _ ticket: ConnectionAdmission.Ticket) -> Void
    ) {
        let listenFD = state.withLock { $0.listenFD }
        startDetachedThread(name: "castd accept") { [self] in
            TCP.serve(
                listenFD, isStopped: { state.withLock { $0.stopped } },
                onFailure: { logger.error("accept failed: \($0)") }
            ) { fd, peer in
                arrived(fd: fd, peer: peer, connection: connection)
            }
            close(listenFD)
        }
    }

    /// Stops accepting: the accept thread wakes and ends. Connections in progress end when their peers go.
    func stop() {
        let fd = state.withLock { state in
            state.stopped = true
            return state.listenFD
        }
        if fd >= 0 { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
    }

    /// The connection `ticket` is admitted: it no longer counts against the places for strangers. False when it must
    /// be closed instead: the admitted connections are full, or it had been evicted.
    func admit(_ ticket: ConnectionAdmission.Ticket) -> Bool {
        // Only unadmitted connections are ever evicted, so the wake-up descriptor is no longer needed.
        let (admitted, handle) = state.withLock { $0.door.admit(ticket) }
        if let handle { close(handle) }
        return admitted
    }

    /// Carries out the door's word on a connection just accepted.
    private func arrived(
        fd: Int32, peer: String,
        connection: @escaping @Sendable (Int32, String, ConnectionAdmission.Ticket) -> Void
    ) {
        let wakeHandle = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        if wakeHandle < 0 {
            let reason = String(cString: strerror(errno))
            turnedAway("connection from \(peer) refused: no descriptor left (\(reason))")
            close(fd)
            return
        }
        let source = ConnectionAdmission.source(ofPeer: peer)
        let (arrival, limit) = state.withLock {
            ($0.door.arrive(from: source, handle: wakeHandle), $0.door.admission.limits.maximumUnadmitted)
        }
        guard case .serve(let ticket, let evictedHandle) = arrival else {
            if case .refuse(let reason) = arrival {
                turnedAway("connection from \(peer) refused: \(reason)")
            }
            close(wakeHandle)
            close(fd)
            return
        }
        if let evictedHandle {
            // Its thread wakes with an error or the end of the stream, and ends as any closed connection does.
            _ = Glibc.shutdown(evictedHandle, Int32(SHUT_RDWR))
            close(evictedHandle)
            turnedAway(
                "the oldest connection waiting to be admitted was closed to make room for \(peer) (\(limit) waiting)")
        }
        startDetachedThread(name: "castd connection") { [self] in
            connection(fd, peer, ticket)
            if let handle = state.withLock({ $0.door.leave(ticket) }) { close(handle) }
        }
    }

    /// Logs a connection turned away, at most once a second (with how many more were turned away meanwhile).
    private func turnedAway(_ message: String) {
        let now = ContinuousClock.now - epoch
        guard let quiet = state.withLock({ $0.door.turnedAway(now: now) }) else { return }
        logger.warning(message + (quiet > 0 ? " (\(quiet) more turned away in the second before, not logged)" : ""))
    }
}
