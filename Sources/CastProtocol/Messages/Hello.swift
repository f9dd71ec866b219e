/// The version of Cast's programs and libraries (castd, cast, CastKit), shown in hellos, help and manual pages.
public let castVersion = "0.1.0"

/// The protocol version this build speaks. A peer with another major version is refused.
public let protocolVersion = 1

/// Sender → receiver: who I am and which version I speak.
public struct Hello: Codable, Sendable, Equatable {
    /// The protocol version of the sender.
    public var version: Int
    /// The sender's human-readable name (user@host), shown in receiver logs.
    public var name: String
    /// The sending software, e.g. "cast 0.1".
    public var software: String

    /// Creates a hello.
    public init(version: Int = protocolVersion, name: String, software: String) {
        self.version = version
        self.name = name
        self.software = software
    }
}

extension Hello: MessageBody {
    func check() throws(ProtocolError) {
        try checkText(name, field: "hello.name")
        try checkText(software, field: "hello.software")
    }
}
