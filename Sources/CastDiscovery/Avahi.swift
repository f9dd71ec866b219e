internal import CAvahi

/// avahi's anonymous-enum constants, typed as its functions take them, its error texts, and the loading of the
/// library itself.
enum Avahi {
    static let anyInterface = AvahiIfIndex(AVAHI_IF_UNSPEC)
    static let anyProtocol = AvahiProtocol(AVAHI_PROTO_UNSPEC)
    static let inet6 = AvahiProtocol(AVAHI_PROTO_INET6)
    static let errorCollision = Int32(AVAHI_ERR_COLLISION)
    static let errorDisconnected = Int32(AVAHI_ERR_DISCONNECTED)

    /// The library opened on first use (`libavahi-client.so.3`). It is not linked: loading it maps D-Bus, systemd
    /// and six more libraries, which a `cast` that never browses should not pay for at every start.
    static let libraryName = CAST_AVAHI_SONAME

    /// Opens avahi-client if it is not open yet. Every entry point that starts avahi (a browse, an advertiser) calls
    /// this before any other avahi function, which would abort without the library.
    /// - Throws: ``DiscoveryError/libraryMissing`` when the library cannot be opened.
    static func load() throws(DiscoveryError) {
        try open { error, size in cast_avahi_load(error, size) }
    }

    /// Opens the library `name` as ``load()`` opens avahi-client: how a test asks for one that is not there.
    static func load(named name: String) throws(DiscoveryError) {
        try open { error, size in cast_avahi_load_named(name, error, size) }
    }

    private static func open(_ load: (UnsafeMutablePointer<CChar>, Int) -> Bool) throws(DiscoveryError) {
        var reason = ""
        let isLoaded = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 512) { error in
            error.initialize(repeating: 0)
            if load(error.baseAddress!, error.count) { return true }
            reason = String(cString: error.baseAddress!)
            return false
        }
        if !isLoaded { throw .libraryMissing(reason) }
    }

    /// avahi's words for an error code (`avahi_strerror`).
    static func message(_ error: Int32) -> String {
        cast_avahi_strerror(error).map { String(cString: $0) } ?? "error \(error)"
    }
}
