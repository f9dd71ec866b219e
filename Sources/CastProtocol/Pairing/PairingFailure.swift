/// Receiver → sender: pairing did not happen. The receiver closes the connection after sending it.
///
/// Wire form: `{"message":"wrong PIN","reason":"authenticationFailed","retryAfter":2}` (`retryAfter` absent
/// when there is nothing to wait for).
public struct PairingFailure: Codable, Sendable, Equatable {
    /// Why pairing failed, as a stable word. Unknown words from newer receivers decode as they are.
    public struct Reason: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible {
        /// The word on the wire.
        public let rawValue: String
        /// Wraps a word.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The word.
        public var description: String { rawValue }

        /// The sender's proof was wrong: a wrong PIN or password (or a relayed session).
        public static let authenticationFailed = Reason(rawValue: "authenticationFailed")
        /// Too many failed attempts in a row: pairing is closed until the receiver's operator reopens it (no
        /// `retryAfter`; receivers before issue #13 sent one: closed for that long).
        public static let locked = Reason(rawValue: "locked")
        /// An attempt failed recently (a wrong PIN, or one given up): wait `retryAfter` seconds before the next.
        public static let backingOff = Reason(rawValue: "backingOff")
        /// Another pairing attempt is in progress; retry after `retryAfter` seconds.
        public static let busy = Reason(rawValue: "busy")
        /// The receiver does not pair (`--auth none`), or the sender broke the pairing protocol.
        public static let notAccepted = Reason(rawValue: "notAccepted")
    }

    /// Why.
    public var reason: Reason
    /// For people, e.g. "wrong PIN; try again in 2 s"; at most 1024 UTF-8 bytes.
    public var message: String
    /// Seconds to wait before the next attempt (0...3600), when there is something to wait for.
    public var retryAfter: Int?

    /// Creates the message.
    public init(reason: Reason, message: String, retryAfter: Int? = nil) {
        self.reason = reason
        self.message = message
        self.retryAfter = retryAfter
    }

    private enum CodingKeys: String, CodingKey {
        case reason, message, retryAfter
    }

    /// Decodes and bounds-checks the message.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let word = try container.decodeText(forKey: .reason)
        guard !word.isEmpty, word.utf8.count <= 64 else {
            throw DecodingError.dataCorruptedError(forKey: .reason, in: container, debugDescription: "bad reason")
        }
        reason = Reason(rawValue: word)
        message = try container.decodeText(forKey: .message)
        retryAfter = try container.decodeIfPresent(Int.self, forKey: .retryAfter)
        if let retryAfter, !(0...PairingFieldLimits.maximumRetryAfter).contains(retryAfter) {
            throw DecodingError.dataCorruptedError(
                forKey: .retryAfter, in: container,
                debugDescription: "not within 0...\(PairingFieldLimits.maximumRetryAfter)")
        }
    }

    /// Encodes the message; `retryAfter` only when set.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(reason.rawValue, forKey: .reason)
        try container.encode(message, forKey: .message)
        try container.encodeIfPresent(retryAfter, forKey: .retryAfter)
    }
}
