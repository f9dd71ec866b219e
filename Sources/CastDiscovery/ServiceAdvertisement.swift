/// A receiver's advertisement: the DNS-SD instance name, port and TXT record of `_castd._tcp` (or of another
/// service type the receiver speaks, such as `_airplay._tcp`).
public struct ServiceAdvertisement: Sendable, Equatable {
    /// The DNS-SD service type every receiver is advertised under.
    public static let castServiceType = "_castd._tcp"

    /// The instance name, i.e. the receiver's friendly name ("Living Room"); spaces and capitals are fine.
    public var name: String
    /// The TCP port the receiver listens on.
    public var port: UInt16
    /// The TXT record as `key=value` pairs (UTF-8), e.g. `v`, `id`, `fn`, `ft`, `auth`.
    public var txt: [String: String]
    /// The DNS-SD service type, `_castd._tcp` unless said otherwise.
    public var serviceType: String

    /// Creates an advertisement of `name` on `port` with the TXT record `txt`, under `serviceType`.
    public init(
        name: String, port: UInt16, txt: [String: String] = [:],
        serviceType: String = ServiceAdvertisement.castServiceType
    ) {
        self.name = name
        self.port = port
        self.txt = txt
        self.serviceType = serviceType
    }
}
