/// A receiver found by ``Browser``: one entry per instance name, resolved to an address.
public struct DiscoveredReceiver: Sendable, Equatable, Codable {
    /// The DNS-SD instance name (the receiver's friendly name).
    public var name: String
    /// The host name avahi resolved the service to (`kitchen.local`).
    public var host: String
    /// The numeric address, IPv4 when the receiver has one; IPv6 link-local addresses carry `%interface`.
    public var address: String
    /// The TCP port the receiver listens on.
    public var port: UInt16
    /// The TXT record as `key=value` pairs; a key without `=` has the value "".
    public var txt: [String: String]

    /// Creates a discovered receiver from its parts.
    public init(name: String, host: String, address: String, port: UInt16, txt: [String: String]) {
        self.name = name
        self.host = host
        self.address = address
        self.port = port
        self.txt = txt
    }
}
