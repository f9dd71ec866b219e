/// A speaker broke the RAOP protocol, or refused what we asked. Thrown by the pure rules of this target
/// (parsers, decoders, the session state machine); the I/O layer turns it into a message for the user.
public struct RAOPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, as a stable word (new words may be added).
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// An RTSP response that is not `RTSP/1.0 NNN reason`, or a header line that is not `Name: value`.
        public static let malformedResponse = Code(rawValue: "malformedResponse")
        /// An RTSP response head or body above the parser's limits.
        public static let responseTooLarge = Code(rawValue: "responseTooLarge")
        /// A response whose CSeq is not the one of the request waiting for it, or a response nobody asked for.
        public static let unexpectedResponse = Code(rawValue: "unexpectedResponse")
        /// The speaker answered with a status other than 200 (see `status`).
        public static let refused = Code(rawValue: "refused")
        /// The SETUP answer has no usable `Transport` header (ports).
        public static let missingTransport = Code(rawValue: "missingTransport")
        /// A UDP packet (timing, control, sync, audio) that is not what its type says.
        public static let malformedPacket = Code(rawValue: "malformedPacket")
    }

    /// The stable code.
    public let code: Code
    /// The RTSP status the speaker answered with, for `.refused`.
    public let status: Int?
    /// A human-readable explanation.
    public let message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String, status: Int? = nil) {
        self.code = code
        self.message = message
        self.status = status
    }

    public var description: String { message }
}
