/// castd's configuration file: `key = value` lines whose keys are the long flag names without dashes;
/// `#` starts a comment. Parsing only: which keys exist is the daemon's business.
public enum ConfigFile {
    /// One setting and the line it came from.
    public struct Entry: Sendable, Equatable {
        /// The key (a long flag name without dashes).
        public var key: String
        /// The value, trimmed; may contain spaces (`name = Living Room`).
        public var value: String
        /// The 1-based line number, for error messages.
        public var line: Int
    }

    /// The largest config file read: anything bigger is not a config file.
    public static let maximumSize = 64 * 1024

    /// Parses the file's text.
    /// - Throws: `ConfigFile.Error` naming the line of the first malformed entry.
    public static func parse(_ text: String) throws(ConfigFile.Error) -> [Entry] {
        guard text.utf8.count <= maximumSize else { throw Error("the file is larger than \(maximumSize) bytes") }
        var entries: [Entry] = []
        // Split on every newline Character: in Swift "\r\n" is one Character, so splitting on "\n"
        // alone would leave a CRLF file as one line.
        for (index, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            var line = Substring(raw)
            // Search scalars, not Characters: "#" followed by a combining mark is one Character
            // that is not "#", and would hide the comment (found by ConfigFileFuzz).
            if let hash = line.unicodeScalars.firstIndex(of: "#") { line = Substring(line.unicodeScalars[..<hash]) }
            let trimmed = line.trimmingSpaces()
            if trimmed.isEmpty { continue }
            guard let equals = trimmed.unicodeScalars.firstIndex(of: "=") else {
                throw Error("line \(index + 1): expected 'key = value', found '\(trimmed)'")
            }
            let key = Substring(trimmed.unicodeScalars[..<equals]).trimmingSpaces()
            let value = Substring(trimmed.unicodeScalars[trimmed.unicodeScalars.index(after: equals)...])
                .trimmingSpaces()
            guard !key.isEmpty, key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
                throw Error("line \(index + 1): '\(key)' is not a setting name")
            }
            entries.append(Entry(key: String(key), value: String(value), line: index + 1))
        }
        return entries
    }

    /// A malformed config file.
    public struct Error: Swift.Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong, with the line number.
        public let message: String
        init(_ message: String) { self.message = message }
        public var description: String { message }
    }
}

extension Substring {
    /// Without leading and trailing blanks, by scalar: a blank followed by a combining mark is one
    /// Character that is not a blank, and must still be trimmed (found by ConfigFileFuzz).
    fileprivate func trimmingSpaces() -> Substring {
        var scalars = unicodeScalars[...]
        let blanks: Set<Unicode.Scalar> = [" ", "\t", "\r"]
        while let first = scalars.first, blanks.contains(first) { scalars = scalars.dropFirst() }
        while let last = scalars.last, blanks.contains(last) { scalars = scalars.dropLast() }
        return Substring(scalars)
    }
}
