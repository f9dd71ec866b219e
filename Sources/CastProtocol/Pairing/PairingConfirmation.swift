import FoundationEssentials

/// Receiver → sender: the receiver's proof M2 and its public key. The receiver sends it only after M1 was
/// right and the sender was stored; the sender pins the receiver only after M2 is right too.
///
/// Wire form: `{"M2":"<base64>","publicKey":"<64 hex digits>"}`.
public struct PairingConfirmation: Codable, Sendable, Equatable {
    /// The receiver's proof M2, 1...64 bytes (base64 on the wire).
    public var M2: [UInt8]
    /// The receiver's 32-byte Ed25519 public key. The sender must refuse pairing unless it equals the key of
    /// the receiver's TLS certificate on this connection.
    public var publicKey: [UInt8]

    /// Creates the message.
    public init(M2: [UInt8], publicKey: [UInt8]) {
        self.M2 = M2
        self.publicKey = publicKey
    }

    private enum CodingKeys: String, CodingKey {
        case M2, publicKey
    }

    /// Decodes and bounds-checks the message.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        M2 = try container.decodeBase64(forKey: .M2, maximumCount: PairingFieldLimits.maximumProofCount)
        publicKey = try container.decodePublicKey(forKey: .publicKey)
    }

    /// Encodes M2 as base64 and the key as lowercase hex.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Data(M2).base64EncodedString(), forKey: .M2)
        try container.encode(pairingHex(publicKey), forKey: .publicKey)
    }
}
