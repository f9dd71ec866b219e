/// The 4-digit PIN that `castd` shows for one pairing attempt and the user types into `cast pair`.
public struct PairingPIN: Sendable, Hashable, CustomStringConvertible {
    /// Exactly four ASCII digits, leading zeros kept ("0042"): the SRP password.
    public let digits: String

    /// How many digits a PIN has.
    public static let length = 4

    /// Parses what a user typed: four ASCII digits, surrounding white space ignored; `nil` otherwise.
    public init?(_ text: String) {
        let trimmed = text.trimmed()
        guard trimmed.utf8.count == Self.length,
            trimmed.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return nil }
        digits = trimmed
    }

    private init(value: UInt16) {
        let text = String(value)
        digits = String(repeating: "0", count: Self.length - text.count) + text
    }

    /// A fresh PIN, uniform over 0000...9999, from `generator`.
    ///
    /// Rejection sampling keeps it unbiased: 16-bit draws of 60 000 or more (the remainder of 65 536 after
    /// the largest multiple of 10 000) are discarded instead of folded in by a modulo.
    public static func random<Generator: RandomNumberGenerator>(using generator: inout Generator) -> PairingPIN {
        while true {
            let draw = UInt16(truncatingIfNeeded: generator.next())
            if draw < 60_000 { return PairingPIN(value: draw % 10_000) }
        }
    }

    /// A fresh PIN from the system's cryptographically secure generator (`getrandom`).
    public static func random() -> PairingPIN {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// The digits.
    public var description: String { digits }
}
