/// The stable word an `error` message carries (`ErrorMessage.code`), shared by both ends so that neither matches a
/// string literal. An open set: a code this version does not know (from a newer peer) still decodes, keeps its
/// word, and compares unequal to every code below. docs/protocol.md lists them.
public struct ErrorCode: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    // MARK: The peer broke the protocol (the connection is closed after the error)

    /// A length prefix of zero.
    public static let emptyFrame = ErrorCode(rawValue: "emptyFrame")
    /// A length prefix above the connection's limit.
    public static let frameTooLarge = ErrorCode(rawValue: "frameTooLarge")
    /// A message type this version does not know.
    public static let unknownMessageType = ErrorCode(rawValue: "unknownMessageType")
    /// A payload that does not decode as its message.
    public static let malformedMessage = ErrorCode(rawValue: "malformedMessage")
    /// A message that is not allowed in the connection's current state (e.g. before hello).
    public static let unexpectedMessage = ErrorCode(rawValue: "unexpectedMessage")
    /// The peer speaks a protocol version we do not.
    public static let unsupportedVersion = ErrorCode(rawValue: "unsupportedVersion")
    /// The peer must pair before anything else.
    public static let pairingRequired = ErrorCode(rawValue: "pairingRequired")
    /// The peer stalled mid-frame or did not say hello in time.
    public static let timeout = ErrorCode(rawValue: "timeout")

    // MARK: A request the receiver or sender cannot carry out (the connection stays)

    /// A play request while another sender plays and the receiver's take-over policy is `deny`.
    public static let busy = ErrorCode(rawValue: "busy")
    /// A control, or a `watch`, while nothing plays.
    public static let notPlaying = ErrorCode(rawValue: "notPlaying")
    /// A media connection for a session token the receiver does not have (or no longer has).
    public static let unknownSession = ErrorCode(rawValue: "unknownSession")
    /// The sender could not read its media at the offset the receiver asked for.
    public static let mediaUnreadable = ErrorCode(rawValue: "mediaUnreadable")
    /// More requests of one kind than the receiver answers per second on one connection (time requests: 20 a
    /// second); the extra one is not answered otherwise.
    public static let tooManyRequests = ErrorCode(rawValue: "tooManyRequests")
    /// castd could not read the media for its decoder worker (worker channel only).
    public static let readFailed = ErrorCode(rawValue: "readFailed")
}
