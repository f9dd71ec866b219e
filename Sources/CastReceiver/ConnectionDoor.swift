/// castd's door as a value with no I/O: who among the accepted connections is served (`ConnectionAdmission`), the
/// wake-up handle each unadmitted connection keeps until it is admitted or ends, and how often a connection turned
/// away is logged. The accept loop carries out what it says (closing handles, logging); tests drive it with numbers.
///
/// A handle is a second descriptor of an unadmitted connection's socket in castd: shutdown(2) on it wakes the
/// connection's thread wherever it waits when the connection is evicted, even after that thread closed its own
/// descriptor (whose number may already be another connection's). Each handle is given back exactly once: the
/// evicted one at the eviction, the others at admission or at the end; one refused at arrival is never taken.
///
/// Thread-safety: a value; `Receiver` keeps it under its lock.
struct ConnectionDoor<Handle> {
    /// What to do with a connection that has just been accepted.
    enum Arrival {
        /// Serve it under `ticket`; first wake and close `evicted`, the handle of the connection that lost its place.
        case serve(ticket: ConnectionAdmission.Ticket, evicted: Handle?)
        /// Close it at once (and its handle, not kept): its source already holds its share of the unadmitted places.
        case refuse(String)
    }

    /// A connection turned away is logged at most once in this, with how many more were turned away meanwhile: a
    /// stranger reopening in a loop must not flood the log.
    static var logInterval: Duration { .seconds(1) }

    private(set) var admission: ConnectionAdmission
    private var handles: [ConnectionAdmission.Ticket: Handle] = [:]
    private var lastLogged: Duration?
    private var quiet = 0

    init(limits: ConnectionAdmission.Limits) {
        admission = ConnectionAdmission(limits: limits)
    }

    /// A connection from `source` was accepted, `handle` its wake-up handle.
    mutating func arrive(from source: String, handle: Handle) -> Arrival {
        switch admission.arrive(from: source) {
        case .refuse(let reason):
            return .refuse(reason)
        case .serve(let ticket, let evicting):
            handles[ticket] = handle
            return .serve(ticket: ticket, evicted: evicting.flatMap { handles.removeValue(forKey: $0) })
        }
    }

    /// The connection is admitted (`ConnectionAdmission.admit`); once admitted it is never evicted, so its handle is
    /// given back to be closed.
    mutating func admit(_ ticket: ConnectionAdmission.Ticket) -> (admitted: Bool, release: Handle?) {
        let admitted = admission.admit(ticket)
        return (admitted, admitted ? handles.removeValue(forKey: ticket) : nil)
    }

    /// The connection ended: its handle, if it still had one, to be closed.
    mutating func leave(_ ticket: ConnectionAdmission.Ticket) -> Handle? {
        admission.leave(ticket)
        return handles.removeValue(forKey: ticket)
    }

    /// A connection was turned away at `now` (the receiver's monotonic time): nil when it is not logged, else how
    /// many were turned away, and not logged, since the last one that was.
    mutating func turnedAway(now: Duration) -> Int? {
        if let lastLogged, now - lastLogged < Self.logInterval {
            quiet += 1
            return nil
        }
        defer { (lastLogged, quiet) = (now, 0) }
        return quiet
    }
}
