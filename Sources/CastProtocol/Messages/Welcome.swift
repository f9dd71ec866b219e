/// Receiver → sender: the connection is accepted.
public struct Welcome: Codable, Sendable, Equatable {
    /// The receiver's protocol version.
    public var version: Int
    /// The receiver's friendly name.
    public var name: String
    /// The receiver's id (fingerprint of its public key), as in the TXT record.
    public var id: String
    /// The receiver's authentication mode: `pin`, `password` or `none`.
    public var auth: String

    /// Creates a welcome.
    public init(version: Int = protocolVersion, name: String, id: String, auth: String) {
        self.version = version
        self.name = name
        self.id = id
        self.auth = auth
    }
}

extension Welcome: MessageBody {
    func check() throws(ProtocolError) {
        try checkText(name, field: "welcome.name")
        try checkText(id, field: "welcome.id")
    }
}
