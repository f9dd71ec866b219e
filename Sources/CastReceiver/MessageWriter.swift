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

    init(_ tls: TLSConnection) { self.tls = tls }

    /// Writes one message; a write that cannot finish within 10 s fails (a sender that stopped reading).
    func send(_ message: Message) throws {
        let bytes = message.frame().encoded()
        try broken.withLock { broken in
            guard !broken else { throw ConnectionGone() }
            do {
                try tls.write(bytes, timeout: .seconds(10))
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
