internal import CAvahi
import Glibc

/// One browse: a client, a service browser and its resolvers on an `AvahiSimplePoll` that is iterated on the
/// calling thread, so every callback runs on that thread (this class is not Sendable and needs no lock).
final class BrowseSession {
    private let serviceType: String
    private let poll: OpaquePointer
    private var client: OpaquePointer?
    private var browser: OpaquePointer?
    /// Resolved receivers by instance name.
    private var receivers: [String: DiscoveredReceiver] = [:]
    private var pendingResolves = 0
    private var isAllForNow = false
    private var failure: DiscoveryError?
    /// In a watch: told of every change as it happens; resolvers stay alive to report changes of a service.
    private var onChange: ((BrowseEvent) -> Void)?
    private var resolvers: [String: [OpaquePointer]] = [:]

    init(serviceType: String) throws {
        try Avahi.load()
        guard let poll = cast_avahi_simple_poll_new() else { throw DiscoveryError.browseFailed("out of memory") }
        self.serviceType = serviceType
        self.poll = poll
        var error: Int32 = 0
        // No AVAHI_CLIENT_NO_FAIL: without a daemon (or without a bus) this fails at once.
        client = cast_avahi_client_new(
            cast_avahi_simple_poll_get(poll), AvahiClientFlags(0),
            { client, state, userdata in
                BrowseSession.session(userdata).clientChanged(client, state)
            }, context, &error)
        if client == nil { throw DiscoveryError.daemonNotRunning(Avahi.message(error)) }
    }

    deinit {
        // Freeing the client frees its browser and every resolver still running.
        if let client { cast_avahi_client_free(client) }
        cast_avahi_simple_poll_free(poll)
    }

    private var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private static func session(_ userdata: UnsafeMutableRawPointer?) -> BrowseSession {
        Unmanaged<BrowseSession>.fromOpaque(userdata!).takeUnretainedValue()
    }

    func run(
        timeout: Duration, until found: ((DiscoveredReceiver) -> Bool)? = nil, cancellation: BrowseCancellation? = nil
    ) throws -> [DiscoveredReceiver] {
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + timeout
        let earliestReturn = start + min(timeout, .seconds(1))
        guard let client else { throw DiscoveryError.daemonNotRunning("no client") }
        browser = cast_avahi_service_browser_new(
            client, Avahi.anyInterface, Avahi.anyProtocol, serviceType, nil, AvahiLookupFlags(0),
            { browser, interface, proto, event, name, type, domain, flags, userdata in
                BrowseSession.session(userdata).browserEvent(interface, proto, event, name, type, domain)
            }, context)
        if browser == nil { throw DiscoveryError.browseFailed(Avahi.message(cast_avahi_client_errno(client))) }
        if let cancellation, !cancellation.register(poll) { return [] }
        defer { cancellation?.unregister(poll) }

        while true {
            if let failure { throw failure }
            if cancellation?.isCancelled == true { break }
            let now = clock.now
            let isComplete = isAllForNow && pendingResolves == 0
            if now >= deadline || (isComplete && now >= earliestReturn) { break }
            // The caller knows what it looks for: no need to wait for the rest of the network.
            if let found, receivers.values.contains(where: found) { break }
            let wake = isComplete ? earliestReturn : deadline
            let sleep = Self.milliseconds(wake - now)
            if cast_avahi_simple_poll_iterate(poll, Int32(clamping: max(1, min(sleep, 250)))) != 0 {
                throw DiscoveryError.browseFailed("avahi's event loop failed")
            }
        }
        return receivers.values.sorted { $0.name < $1.name }
    }

    /// Follows the services as they come, change and go, telling `onChange` on this thread, until `isCancelled`
    /// (checked at least every 250 ms) returns true.
    /// - Throws: ``DiscoveryError`` when avahi fails (the daemon stopped, the browse failed).
    func watch(onChange: @escaping (BrowseEvent) -> Void, isCancelled: () -> Bool) throws {
        guard let client else { throw DiscoveryError.daemonNotRunning("no client") }
        self.onChange = onChange
        browser = cast_avahi_service_browser_new(
            client, Avahi.anyInterface, Avahi.anyProtocol, serviceType, nil, AvahiLookupFlags(0),
            { browser, interface, proto, event, name, type, domain, flags, userdata in
                BrowseSession.session(userdata).browserEvent(interface, proto, event, name, type, domain)
            }, context)
        if browser == nil { throw DiscoveryError.browseFailed(Avahi.message(cast_avahi_client_errno(client))) }
        while !isCancelled() {
            if let failure { throw failure }
            if cast_avahi_simple_poll_iterate(poll, 250) != 0 {
                throw DiscoveryError.browseFailed("avahi's event loop failed")
            }
        }
    }

    /// Wakes a poll that another thread iterates (`BrowseCancellation`).
    static func wake(_ poll: OpaquePointer) { cast_avahi_simple_poll_wakeup(poll) }

    private static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }

    // MARK: Callbacks

    private func clientChanged(_ changed: OpaquePointer?, _ state: AvahiClientState) {
        if state == AVAHI_CLIENT_FAILURE {
            let error = changed.map { cast_avahi_client_errno($0) } ?? Avahi.errorDisconnected
            failure = .daemonNotRunning(Avahi.message(error))
        }
    }

    private func browserEvent(
        _ interface: AvahiIfIndex, _ proto: AvahiProtocol, _ event: AvahiBrowserEvent,
        _ name: UnsafePointer<CChar>?, _ type: UnsafePointer<CChar>?, _ domain: UnsafePointer<CChar>?
    ) {
        switch event {
        case AVAHI_BROWSER_NEW:
            guard let client, let name, let type, let domain else { return }
            // Every instance of a name is resolved until one gives an IPv4 address; the rest would add nothing.
            if let known = receivers[String(cString: name)], !known.address.contains(":") { return }
            if onChange != nil {
                // A watch keeps one resolver per instance and interface/protocol: it reports changes of the service.
                let resolver = cast_avahi_service_resolver_new(
                    client, interface, proto, name, type, domain, Avahi.anyProtocol, AvahiLookupFlags(0),
                    { _, interface, _, event, name, _, _, host, address, port, txt, _, userdata in
                        BrowseSession.session(userdata).resolved(interface, event, name, host, address, port, txt)
                    }, context)
                if let resolver { resolvers[String(cString: name), default: []].append(resolver) }
                return
            }
            let resolver = cast_avahi_service_resolver_new(
                client, interface, proto, name, type, domain, Avahi.anyProtocol, AvahiLookupFlags(0),
                { resolver, interface, _, event, name, _, _, host, address, port, txt, _, userdata in
                    BrowseSession.session(userdata).resolved(interface, event, name, host, address, port, txt)
                    cast_avahi_service_resolver_free(resolver)
                }, context)
            if resolver != nil { pendingResolves += 1 }
        case AVAHI_BROWSER_REMOVE:
            guard let onChange, let name else { return }
            let instance = String(cString: name)
            // Gone from one interface or protocol; it may still be seen on another, but a watch reports the
            // service gone once any of its announcements is withdrawn (avahi withdraws them all together).
            for resolver in resolvers.removeValue(forKey: instance) ?? [] { cast_avahi_service_resolver_free(resolver) }
            if receivers.removeValue(forKey: instance) != nil { onChange(.disappeared(name: instance)) }
        case AVAHI_BROWSER_ALL_FOR_NOW:
            isAllForNow = true
        case AVAHI_BROWSER_FAILURE:
            failure = .browseFailed(Avahi.message(client.map { cast_avahi_client_errno($0) } ?? 0))
        default:
            break
        }
    }

    private func resolved(
        _ interface: AvahiIfIndex, _ event: AvahiResolverEvent, _ name: UnsafePointer<CChar>?,
        _ host: UnsafePointer<CChar>?, _ address: UnsafePointer<AvahiAddress>?, _ port: UInt16,
        _ txt: UnsafeMutablePointer<AvahiStringList>?
    ) {
        if onChange == nil { pendingResolves -= 1 }
        guard event == AVAHI_RESOLVER_FOUND, let name, let host, let address else { return }
        let receiver = DiscoveredReceiver(
            name: String(cString: name), host: String(cString: host),
            address: Self.numeric(address, interface: interface), port: port, txt: TXTRecord.dictionary(from: txt))
        let known = receivers[receiver.name]
        if let onChange {
            // One entry per instance: an IPv6 answer does not replace an IPv4 one, but a change of either does.
            if let known, receiver.address.contains(":") && !known.address.contains(":") {
                guard known.txt != receiver.txt || known.port != receiver.port else { return }
                receivers[receiver.name] = DiscoveredReceiver(
                    name: known.name, host: known.host, address: known.address, port: receiver.port, txt: receiver.txt)
            } else {
                guard known != receiver else { return }
                receivers[receiver.name] = receiver
            }
            onChange(known == nil ? .appeared(receivers[receiver.name]!) : .updated(receivers[receiver.name]!))
            return
        }
        // A receiver that leaves during a short browse is still reported, as if it left just after.
        if let known, !known.address.contains(":") { return }
        receivers[receiver.name] = receiver
    }

    /// The address as text; an IPv6 link-local one gets `%interface`, without which it cannot be connected to.
    private static func numeric(_ address: UnsafePointer<AvahiAddress>, interface: AvahiIfIndex) -> String {
        var buffer = [CChar](repeating: 0, count: Int(AVAHI_ADDRESS_STR_MAX))
        cast_avahi_address_snprint(&buffer, buffer.count, address)
        var text = Self.string(fromNULTerminated: buffer)
        if address.pointee.proto == Avahi.inet6, text.lowercased().hasPrefix("fe80:"), interface >= 0 {
            var interfaceName = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
            if if_indextoname(UInt32(interface), &interfaceName) != nil {
                text += "%" + Self.string(fromNULTerminated: interfaceName)
            }
        }
        return text
    }

    private static func string(fromNULTerminated buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
