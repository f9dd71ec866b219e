import CastBase
import FoundationEssentials

/// The bounds on pairing message fields, so that no field can make a receiver allocate much before the
/// peer is authenticated.
public enum PairingFieldLimits {
    /// An Ed25519 public key: exactly 32 bytes (64 hex digits on the wire).
    public static let publicKeyCount = 32
    /// The longest salt: 64 bytes.
    public static let maximumSaltCount = 64
    /// The longest SRP public value (A or B): 512 bytes, room for groups up to 4096 bits.
    public static let maximumPublicValueCount = 512
    /// The longest proof (M1 or M2): 64 bytes, a SHA-512 digest.
    public static let maximumProofCount = 64
    /// The longest `retryAfter`: one hour.
    public static let maximumRetryAfter = 3600
}

extension KeyedDecodingContainer {
    /// Base64 bytes, 1...`maximumCount` of them; the string length is checked before decoding.
    func decodeBase64(forKey key: Key, maximumCount: Int) throws -> [UInt8] {
        let text = try decode(String.self, forKey: key)
        guard text.utf8.count <= (maximumCount + 2) / 3 * 4,
            let data = Data(base64Encoded: text), !data.isEmpty, data.count <= maximumCount
        else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "not base64 of 1...\(maximumCount) bytes")
        }
        return Array(data)
    }

    /// A 32-byte Ed25519 public key as 64 hex digits (either case).
    func decodePublicKey(forKey key: Key) throws -> [UInt8] {
        let text = try decode(String.self, forKey: key)
        guard text.utf8.count == PairingFieldLimits.publicKeyCount * 2, let bytes = pairingBytes(fromHex: text) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "not a 32-byte public key in hex")
        }
        return bytes
    }

    /// Text of at most `maximumTextLength` UTF-8 bytes.
    func decodeText(forKey key: Key) throws -> String {
        let text = try decode(String.self, forKey: key)
        guard text.utf8.count <= maximumTextLength else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "longer than \(maximumTextLength) bytes")
        }
        return text
    }
}

/// Lowercase hex of `bytes`.
func pairingHex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0f)]] }, as: UTF8.self)
}

/// The bytes of a hex string, or `nil` when it is not hex.
func pairingBytes(fromHex text: String) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    for index in stride(from: 0, to: digits.count, by: 2) {
        guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { return nil }
        bytes.append(high << 4 | low)
    }
    return bytes
}
