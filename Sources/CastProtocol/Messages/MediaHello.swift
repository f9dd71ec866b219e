/// Sender → receiver, the first message on a media connection: which session it serves.
public struct MediaHello: Codable, Sendable, Equatable {
    /// The protocol version.
    public var version: Int
    /// The token from `PlayAccepted`.
    public var session: String

    /// Creates the hello.
    public init(version: Int = protocolVersion, session: String) {
        self.version = version
        self.session = session
    }
}

extension MediaHello: MessageBody {
    func check() throws(ProtocolError) {
        try checkText(session, field: "mediaHello.session")
    }
}
