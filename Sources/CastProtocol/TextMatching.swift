/// The few string operations of Foundation's `NSString` that the sender and its libraries need, written for Swift's
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
