/// Either way: a failure, with a stable code and a message for people.
public struct ErrorMessage: Codable, Sendable, Equatable {
    /// A stable word (see `ErrorCode`).
    public var code: ErrorCode
    /// A human-readable explanation.
    public var message: String

    /// Creates an error message.
    public init(code: ErrorCode, message: String) {
        self.code = code
        self.message = message
    }

    /// The error message telling a peer about its protocol error.
    public init(_ error: ProtocolError) {
        self.init(code: error.code, message: error.message)
    }
}

extension ErrorMessage: MessageBody {
    func check() throws(ProtocolError) {
        try checkText(message, field: "error.message")
    }
}
