/// Sender → receiver: starts pairing. The receiver answers with a `PairingChallenge` (and shows a fresh PIN)
/// or a `PairingFailure`.
///
/// Wire form: `{"name":"alice@laptop","publicKey":"<64 hex digits>"}`.
public struct PairingStart: Codable, Sendable, Equatable {
    /// The sender's human-readable name (user@host), stored with the pairing; at most 1024 UTF-8 bytes.
    public var name: String
    /// The sender's 32-byte Ed25519 public key. The receiver must refuse pairing unless it equals the key
    /// of the sender's TLS certificate on this connection.
    public var publicKey: [UInt8]

    /// Creates the message.
    public init(name: String, publicKey: [UInt8]) {
        self.name = name
        self.publicKey = publicKey
    }

    private enum CodingKeys: String, CodingKey {
        case name, publicKey
    }

    /// Decodes and bounds-checks the message.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decodeText(forKey: .name)
        publicKey = try container.decodePublicKey(forKey: .publicKey)
    }

    /// Encodes the key as lowercase hex.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(pairingHex(publicKey), forKey: .publicKey)
    }
}
