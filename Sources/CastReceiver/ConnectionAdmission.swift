/// Who gets a place among castd's connections: the rule that keeps strangers from crowding out paired senders, as
/// a value with no I/O (the accept loop carries out what it says).
///
/// A connection is *unadmitted* from its accept until it is admitted (its TLS key is paired, its hello is welcomed,
/// or it is a media connection with a live token). Unadmitted connections cost little (a thread waiting in poll(2)
/// and a socket), so their pool is large, but it is bounded twice:
/// - per source address: a source that already has `maximumUnadmittedPerSource` unadmitted connections has its new
///   one refused at once (no thread, no handshake), so one device cannot fill the pool;
/// - in all: when `maximumUnadmitted` are waiting, a newcomer takes the place of the *oldest* unadmitted connection,
///   which is closed. Strangers on many addresses can then only churn among themselves: a paired sender's
///   connection is the newest when it arrives and is admitted within its handshake (milliseconds), long before
///   `maximumUnadmitted` newer connections push it out.
///
/// The accept loop never waits for a place, so nobody queues behind strangers in the kernel's backlog.
/// Admitted connections are bounded separately (`maximumAdmitted`): one past it is closed at its admission.
struct ConnectionAdmission {
    /// The bounds (see `ReceiverConfiguration.Limits`).
    struct Limits: Equatable {
        var maximumAdmitted: Int
        var maximumUnadmitted: Int
        var maximumUnadmittedPerSource: Int
    }

    /// Names one accepted connection, in the order of arrival.
    typealias Ticket = Int

    /// What to do with a connection that has just been accepted.
    enum Arrival: Equatable {
        /// Serve it under `ticket`; first close the connection `evicting`, when there is one (it lost its place).
        case serve(ticket: Ticket, evicting: Ticket?)
        /// Close it at once: its source already holds its share of the unadmitted places.
        case refuse(String)
    }

    private struct Entry {
        let source: String
        var admitted: Bool
    }

    let limits: Limits
    private var entries: [Ticket: Entry] = [:]
    private var nextTicket: Ticket = 0
    /// Unadmitted tickets, oldest first.
    private var waiting: [Ticket] = []

    init(limits: Limits) {
        self.limits = limits
    }

    /// Unadmitted connections now.
    var unadmittedCount: Int { waiting.count }
    /// Admitted connections now.
    var admittedCount: Int { entries.count - waiting.count }

    /// A connection from `source` (an address without its port) was accepted.
    mutating func arrive(from source: String) -> Arrival {
        let fromSource = waiting.reduce(0) { count, ticket in count + (entries[ticket]?.source == source ? 1 : 0) }
        if fromSource >= limits.maximumUnadmittedPerSource {
            return .refuse("\(source) already has \(fromSource) connections waiting to be admitted")
        }
        var evicted: Ticket?
        if waiting.count >= limits.maximumUnadmitted, let oldest = waiting.first {
            waiting.removeFirst()
            entries[oldest] = nil
            evicted = oldest
        }
        let ticket = nextTicket
        nextTicket += 1
        entries[ticket] = Entry(source: source, admitted: false)
        waiting.append(ticket)
        return .serve(ticket: ticket, evicting: evicted)
    }

    /// The connection is admitted: it leaves the unadmitted pool. False when the admitted connections are full (the
    /// connection must then be closed) or when it was evicted meanwhile.
    mutating func admit(_ ticket: Ticket) -> Bool {
        guard var entry = entries[ticket] else { return false }
        if entry.admitted { return true }
        guard admittedCount < limits.maximumAdmitted else { return false }
        entry.admitted = true
        entries[ticket] = entry
        waiting.removeAll { $0 == ticket }
        return true
    }

    /// The connection ended (or was evicted earlier: then nothing changes).
    mutating func leave(_ ticket: Ticket) {
        guard entries.removeValue(forKey: ticket) != nil else { return }
        waiting.removeAll { $0 == ticket }
    }

    /// The source part of a peer as `TCP.accept` writes it: "192.0.2.1:5000" → "192.0.2.1",
    /// "[2001:db8::1]:5000" → "[2001:db8::1]".
    static func source(ofPeer peer: String) -> String {
        guard let colon = peer.lastIndex(of: ":") else { return peer }
        return String(peer[..<colon])
    }
}
