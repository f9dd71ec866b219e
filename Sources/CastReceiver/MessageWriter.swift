import CastBase
import CastProtocol
import CastSecurity
import Synchronization

/// Sends messages on one TLS connection from any thread: the connection's own thread answers
/// requests while the player's event queue pushes events. The lock keeps each frame whole; the
/// TLS connection itself allows one writer next to one reader.
final class MessageWriter: Sendable {
    private let tls: TLSConnection
    /// True once a write failed: the connection is gone and later writes fail at once instead of
    /// waiting out a timeout each.
    private let broken = Mutex(false)

    /// When the sender last sent anything: a playing sender that falls silent for longer than the
    /// receiver's sender timeout has vanished (asleep, unplugged) and its session is ended.
    private let lastHeard = Mutex(ContinuousClock.now)

    init(_ tls: TLSConnection) { self.tls = tls }

    /// The key the sender presented at the TLS handshake; nil when it presented none.
    var peerPublicKey: [UInt8]? { tls.peerPublicKey }

    /// The sender sent something.
    func heard() { lastHeard.withLock { $0 = .now } }

    /// How long the sender has been silent.
    var silence: Duration { ContinuousClock.now - lastHeard.withLock { $0 } }

    /// Writes one message; a write that cannot finish within 10 s fails (a sender that stopped reading).
    func send(_ message: Message) throws {
        let bytes = message.frame().encoded()
        try write { bytes }
    }

    /// Answers a time request read at `received` (CLOCK_MONOTONIC ns): the reply stamp is taken once the lock is
    /// held, just before the write, so that an event being written meanwhile does not count as turnaround.
    func sendTimeReply(to request: TimeRequest, received: Int64) throws {
        try write {
            let reply = TimeReply(sent: request.sent, received: received, replied: MonotonicClock.nanoseconds())
            return Message.timeReply(reply).frame().encoded()
        }
    }

    /// Writes the bytes `frame` makes, under the lock.
    private func write(_ frame: () -> [UInt8]) throws {
        try broken.withLock { broken in
            guard !broken else { throw ConnectionGone() }
            do {
                try tls.write(frame(), timeout: .seconds(10))
            } catch {
                broken = true
                throw error
            }
        }
    }
}

/// A write to a connection that already failed.
struct ConnectionGone: Error, CustomStringConvertible {
    var description: String { "the connection is gone" }
}
