/// A peer broke the protocol. The connection that produced it is closed after telling the peer why.
public struct ProtocolError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, as a stable word that also travels in `ErrorMessage.code`.
    public typealias Code = ErrorCode

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
