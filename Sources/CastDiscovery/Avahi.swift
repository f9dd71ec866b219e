internal import CAvahi

/// avahi's anonymous-enum constants, typed as its functions take them, and its error texts.
enum Avahi {
    static let anyInterface = AvahiIfIndex(AVAHI_IF_UNSPEC)
    static let anyProtocol = AvahiProtocol(AVAHI_PROTO_UNSPEC)
    static let inet6 = AvahiProtocol(AVAHI_PROTO_INET6)
    static let errorCollision = Int32(AVAHI_ERR_COLLISION)
    static let errorDisconnected = Int32(AVAHI_ERR_DISCONNECTED)

    /// avahi's words for an error code (`avahi_strerror`).
    static func message(_ error: Int32) -> String {
        avahi_strerror(error).map { String(cString: $0) } ?? "error \(error)"
    }
}
