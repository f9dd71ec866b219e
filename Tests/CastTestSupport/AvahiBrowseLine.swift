/// One line of `avahi-browse --parsable`: its event (`+` in sight, `-` gone, `=` resolved) and the instance's name,
/// read as avahi-browse escapes it, for tests that follow a browse as it happens.
///
/// Thread-safety: a value.
public struct AvahiBrowseLine: Equatable, Sendable {
    /// `+`, `-` or `=`.
    public var event: Character
    /// The instance name, unescaped ("Living Room", not `Living\032Room`).
    public var name: String

    /// The line's event and name; nil for a line that is not one (`+;eth0;IPv4;NAME;TYPE;DOMAIN…`).
    public init?(_ line: some StringProtocol) {
        let fields = line.split(separator: ";", maxSplits: 4, omittingEmptySubsequences: false)
        guard fields.count >= 4, fields[0].count == 1, let event = fields[0].first, "+-=".contains(event) else {
            return nil
        }
        self.event = event
        self.name = Self.unescape(fields[3])
    }

    /// Whether `line` is an `event` line for the instance named `name`.
    public static func line(_ line: String, is event: Character, for name: String) -> Bool {
        AvahiBrowseLine(line) == AvahiBrowseLine(event: event, name: name)
    }

    public init(event: Character, name: String) {
        self.event = event
        self.name = name
    }

    /// avahi-browse's escaping undone: `\DDD` is the byte DDD (decimal), `\c` the character c.
    public static func unescape(_ text: some StringProtocol) -> String {
        var bytes: [UInt8] = []
        var rest = Array(text.utf8)[...]
        while let byte = rest.popFirst() {
            guard byte == UInt8(ascii: "\\"), !rest.isEmpty else {
                bytes.append(byte)
                continue
            }
            let digits = rest.prefix(3)
            if digits.count == 3, digits.allSatisfy({ (48...57).contains($0) }),
                let value = UInt8(String(decoding: digits, as: UTF8.self))
            {
                bytes.append(value)
                rest = rest.dropFirst(3)
            } else {
                bytes.append(rest.removeFirst())
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
