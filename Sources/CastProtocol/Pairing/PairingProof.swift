import FoundationEssentials

/// Sender → receiver: the sender's SRP public value A and its proof M1 (which covers the TLS binding).
///
/// Wire form: `{"A":"<base64>","M1":"<base64>"}`.
public struct PairingProof: Codable, Sendable, Equatable {
    /// The sender's SRP public value A, 1...512 bytes big-endian (base64 on the wire).
    public var A: [UInt8]
    /// The sender's proof M1, 1...64 bytes (base64 on the wire).
    public var M1: [UInt8]

    /// Creates the message.
    public init(A: [UInt8], M1: [UInt8]) {
        self.A = A
        self.M1 = M1
    }

    private enum CodingKeys: String, CodingKey {
        case A, M1
    }

    /// Decodes and bounds-checks the message.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        A = try container.decodeBase64(forKey: .A, maximumCount: PairingFieldLimits.maximumPublicValueCount)
        M1 = try container.decodeBase64(forKey: .M1, maximumCount: PairingFieldLimits.maximumProofCount)
    }

    /// Encodes the bytes as base64.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Data(A).base64EncodedString(), forKey: .A)
        try container.encode(Data(M1).base64EncodedString(), forKey: .M1)
    }
}
