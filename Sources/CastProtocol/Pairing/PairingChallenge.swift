import FoundationEssentials

/// Receiver → sender: the SRP salt and the receiver's public value B for this attempt's fresh PIN.
///
/// Wire form: `{"B":"<base64>","salt":"<base64>"}`.
public struct PairingChallenge: Codable, Sendable, Equatable {
    /// The SRP salt, 1...64 bytes (base64 on the wire).
    public var salt: [UInt8]
    /// The receiver's SRP public value B, 1...512 bytes big-endian (base64 on the wire).
    public var B: [UInt8]

    /// Creates the message.
    public init(salt: [UInt8], B: [UInt8]) {
        self.salt = salt
        self.B = B
    }

    private enum CodingKeys: String, CodingKey {
        case salt, B
    }

    /// Decodes and bounds-checks the message.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        salt = try container.decodeBase64(forKey: .salt, maximumCount: PairingFieldLimits.maximumSaltCount)
        B = try container.decodeBase64(forKey: .B, maximumCount: PairingFieldLimits.maximumPublicValueCount)
    }

    /// Encodes the bytes as base64.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Data(salt).base64EncodedString(), forKey: .salt)
        try container.encode(Data(B).base64EncodedString(), forKey: .B)
    }
}
