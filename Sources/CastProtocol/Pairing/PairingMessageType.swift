/// The wire ids of the pairing messages: 30–39 are reserved for pairing. Ids are never reused.
///
/// Kept apart from `MessageType` until the connection state machine routes them; the values are final.
/// The exchange, inside a TLS 1.3 connection whose certificates carry both Ed25519 keys:
///
///     sender                                     receiver
///     pairingStart (name, sender key)       →
///                                           ←    pairingChallenge (salt, B)     or pairingFailure
///     pairingProof (A, M1)                  →
///                                           ←    pairingConfirmation (M2, receiver key)   or pairingFailure
///
/// Both proofs cover the TLS keying-material exporter value of the connection (see `SRPSession` in
/// CastSecurity), so a man in the middle who relays the messages between two TLS sessions fails.
public enum PairingMessageType: UInt8, Sendable, CaseIterable {
    /// Sender → receiver: I want to pair; my name and public key.
    case pairingStart = 30
    /// Receiver → sender: the SRP salt and the receiver's public value B.
    case pairingChallenge = 31
    /// Sender → receiver: the sender's public value A and proof M1.
    case pairingProof = 32
    /// Receiver → sender: the receiver's proof M2 and its public key; the receiver has stored the sender.
    case pairingConfirmation = 33
    /// Receiver → sender: pairing did not happen (wrong PIN, locked, busy, not offered), and when to retry.
    case pairingFailure = 34
    // 35...39: reserved for pairing.
}
