import FoundationEssentials

/// Lowercase hex, as public keys are written in trust stores and shown to users.
func hexString(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(bytes.count * 2)
    for byte in bytes {
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 0x0f)])
    }
    return String(decoding: text, as: UTF8.self)
}

/// The bytes of a hex string (either case), or `nil` if it is not hex.
func bytes(fromHex text: String) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard digits.count % 2 == 0 else { return nil }
    func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
    var result: [UInt8] = []
    result.reserveCapacity(digits.count / 2)
    var index = 0
    while index < digits.count {
        guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
        result.append(high << 4 | low)
        index += 2
    }
    return result
}

extension KeyedDecodingContainer {
    /// A 32-byte Ed25519 public key written as 64 hex digits.
    func decodePublicKey(forKey key: Key) throws -> [UInt8] {
        let text = try decode(String.self, forKey: key)
        guard let bytes = bytes(fromHex: text), bytes.count == 32 else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "not a 32-byte public key in hex")
        }
        return bytes
    }

    /// A name of at most `TrustStoreLimits.maximumNameLength` UTF-8 bytes.
    func decodeName(forKey key: Key) throws -> String {
        let name = try decode(String.self, forKey: key)
        guard name.utf8.count <= TrustStoreLimits.maximumNameLength else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "name too long")
        }
        return name
    }
}

/// The date as stored: whole seconds, since the file keeps ISO 8601 without fractions.
func wholeSeconds(_ date: Date) -> Date {
    Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
}
