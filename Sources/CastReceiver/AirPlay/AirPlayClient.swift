/// One AirPlay client connection, as an identity: sessions it starts belong to it, and end when it goes.
///
/// Thread-safety: immutable.
final class AirPlayClient: Sendable {
    /// The peer's address, for the log ("10.77.1.2:51234").
    let peer: String

    init(peer: String) {
        self.peer = peer
    }
}
