/// Receiver → sender: the play request is accepted; open a media connection that presents `session`.
public struct PlayAccepted: Codable, Sendable, Equatable {
    /// A random token that ties the media connection to this playback session.
    public var session: String

    /// Creates the reply.
    public init(session: String) { self.session = session }
}

extension PlayAccepted: MessageBody {
    func check() throws(ProtocolError) {
        try checkText(session, field: "playAccepted.session")
    }
}
