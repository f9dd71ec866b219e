/// The few string operations of Foundation's `NSString` (and its percent decoding) that the sender and its libraries need, written for Swift's
/// own `String` so that they link FoundationEssentials only (docs/performance.md, "`cast` start-up").

extension StringProtocol {
    /// The text without the white space at either end (spaces, tabs, and any other Unicode white space).
    public func trimmed() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }) else { return "" }
        let last = lastIndex(where: { !$0.isWhitespace })!
        return String(self[first...last])
    }

    /// Whether the two read the same but for case ("Living Room", "living room"): both lowercased by Unicode's rules,
    /// then compared as canonically equivalent Swift strings.
    public func matchesIgnoringCase(_ other: some StringProtocol) -> Bool {
        lowercased() == other.lowercased()
    }

    /// The last component of a path ("/a/b/movie.mp4" → "movie.mp4"; trailing slashes ignored; "/" → "/").
    public var lastPathComponent: String {
        guard let last = split(separator: "/").last else { return isEmpty ? "" : "/" }
        return String(last)
    }
}

/// `text` with each `%XX` replaced by its byte (and, with `plusIsSpace`, each `+` by a space, as form-encoded query
/// strings write one), read as UTF-8; nil when an escape is malformed or the bytes are not UTF-8, as Foundation's
/// `removingPercentEncoding` answers.
public func percentDecoded(_ text: Substring, plusIsSpace: Bool = false) -> String? {
    var bytes: [UInt8] = []
    var iterator = text.utf8.makeIterator()
    while let byte = iterator.next() {
        switch byte {
        case UInt8(ascii: "%"):
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        case UInt8(ascii: "+") where plusIsSpace: bytes.append(0x20)
        default: bytes.append(byte)
        }
    }
    return String(validating: bytes, as: UTF8.self)
}
