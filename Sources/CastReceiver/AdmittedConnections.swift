import CastSecurity
import Synchronization

/// The connections of paired senders that are open now, control and media, each with the key it was admitted by,
/// so that a sender unpaired while castd runs (`castd --unpair`, another process editing the store) loses them
/// at once rather than keeping control until it hangs up.
///
/// Thread-safety: `Sendable`; the list lives in a `Mutex`. Connections are held weakly: a media connection belongs
/// to its session and goes when the session lets go of it.
final class AdmittedConnections: Sendable {
    private struct Entry: Sendable {
        weak var tls: TLSConnection?
        let key: [UInt8]
        let sender: String
        let peer: String
    }

    private let entries = Mutex<[Entry]>([])

    /// Starts watching a connection admitted for the sender with this key; a connection already watched (since its
    /// TLS handshake) is watched once, under the name given now.
    func add(_ tls: TLSConnection, sender: String, peer: String) {
        guard let key = tls.peerPublicKey else { return }
        entries.withLock { entries in
            entries.removeAll { $0.tls == nil || $0.tls === tls }
            entries.append(Entry(tls: tls, key: key, sender: sender, peer: peer))
        }
    }

    /// Stops watching a connection (it ended).
    func remove(_ tls: TLSConnection) {
        entries.withLock { $0.removeAll { $0.tls == nil || $0.tls === tls } }
    }

    /// Whether any connection is watched.
    var isEmpty: Bool { entries.withLock { $0.allSatisfy { $0.tls == nil } } }

    /// Closes every connection whose key `isPaired` no longer accepts, and stops watching it.
    /// - Returns: who lost a connection, and from where, for the log.
    func closeRevoked(isPaired: ([UInt8]) -> Bool) -> [(sender: String, peer: String)] {
        let current = entries.withLock { entries in
            entries.removeAll { $0.tls == nil }
            return entries
        }
        // The store is read outside the lock: a slow disk must not hold up connections being admitted.
        var verdicts: [[UInt8]: Bool] = [:]
        let revoked = current.filter { entry in
            if let known = verdicts[entry.key] { return !known }
            let paired = isPaired(entry.key)
            verdicts[entry.key] = paired
            return !paired
        }
        guard !revoked.isEmpty else { return [] }
        entries.withLock { entries in entries.removeAll { entry in revoked.contains { $0.tls === entry.tls } } }
        for entry in revoked { entry.tls?.close() }
        return revoked.map { ($0.sender, $0.peer) }
    }
}
