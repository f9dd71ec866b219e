/// A peer broke the protocol. The connection that produced it is closed after telling the peer why.
public struct ProtocolError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, as a stable word that also travels in `ErrorMessage.code`.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A length prefix of zero.
        public static let emptyFrame = Code(rawValue: "emptyFrame")
        /// A length prefix above the connection's limit.
        public static let frameTooLarge = Code(rawValue: "frameTooLarge")
        /// A message type this version does not know.
        public static let unknownMessageType = Code(rawValue: "unknownMessageType")
        /// A payload that does not decode as its message.
        public static let malformedMessage = Code(rawValue: "malformedMessage")
        /// A message that is not allowed in the connection's current state (e.g. before hello).
        public static let unexpectedMessage = Code(rawValue: "unexpectedMessage")
        /// The peer speaks a protocol version we do not.
        public static let unsupportedVersion = Code(rawValue: "unsupportedVersion")
        /// The peer must pair before anything else.
        public static let pairingRequired = Code(rawValue: "pairingRequired")
        /// The peer stalled mid-frame or did not say hello in time.
        public static let timeout = Code(rawValue: "timeout")
    }

    /// The stable code.
    public let code: Code
    /// A human-readable explanation.
    public let message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
