/// The DNS-SD service type receivers advertise.
public let serviceType = "_castd._tcp"

/// What a receiver can do, advertised as the TXT key `ft` (hex bit mask). Bits are never reused.
public struct Features: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Plays audio.
    public static let audio = Features(rawValue: 1 << 0)
    /// Shows video.
    public static let video = Features(rawValue: 1 << 1)
    /// Pulls a file that the sender serves over a media connection.
    public static let mediaConnection = Features(rawValue: 1 << 2)
    /// Opens http(s) URLs itself.
    public static let url = Features(rawValue: 1 << 3)
    /// Tells where its playback is anchored (the `anchor` control): a receiver that plays alone joins a group
    /// without stopping.
    public static let anchor = Features(rawValue: 1 << 4)
}

/// The TXT record of a receiver's advertisement: what a sender learns before connecting.
public struct ServiceRecord: Sendable, Equatable {
    /// `v`: the protocol version.
    public var version: Int
    /// `id`: the fingerprint of the receiver's public key.
    public var id: String
    /// `fn`: the friendly name (the instance name may differ after a name conflict).
    public var friendlyName: String
    /// `ft`: features.
    public var features: Features
    /// `auth`: how senders are admitted.
    public var auth: AuthMode

    /// Creates a record.
    public init(version: Int = protocolVersion, id: String, friendlyName: String, features: Features, auth: AuthMode) {
        self.version = version
        self.id = id
        self.friendlyName = friendlyName
        self.features = features
        self.auth = auth
    }

    /// The TXT key/value pairs.
    public var txt: [String: String] {
        [
            "v": String(version), "id": id, "fn": friendlyName,
            "ft": "0x" + String(features.rawValue, radix: 16, uppercase: true), "auth": auth.rawValue,
        ]
    }

    /// Parses a TXT record; nil when a required key is missing or malformed (such a record is not a receiver we can use).
    public init?(txt: [String: String]) {
        guard let v = txt["v"].flatMap({ Int($0) }), let id = txt["id"], !id.isEmpty,
            let ft = txt["ft"], ft.hasPrefix("0x"), let bits = UInt32(ft.dropFirst(2), radix: 16),
            let auth = txt["auth"].flatMap({ AuthMode(rawValue: $0) })
        else { return nil }
        self.init(
            version: v, id: id, friendlyName: txt["fn"] ?? "", features: Features(rawValue: bits), auth: auth)
    }
}
