internal import CSystem
import Glibc

/// Plain TCP sockets (IPv4 and IPv6) as blocking file descriptors, the transport under `TLSConnection`.
///
/// Every descriptor is close-on-exec. Failures throw `SecurityError` with the failing function and `errno`
/// (`.system`), `.addressResolution` for `getaddrinfo`, or `.timedOut`.
public enum TCP {
    /// Binds and listens on `host` (an address such as "0.0.0.0", "::", "127.0.0.1" or "::1") and `port`
    /// (0 picks a free port). Returns the listening descriptor and the port actually bound.
    ///
    /// `SO_REUSEADDR` is on so a restarted receiver can bind again at once. On "::" the socket is dual-stack
    /// (`IPV6_V6ONLY` off) and so also accepts IPv4 clients, where the system allows it.
    public static func listen(host: String, port: UInt16, backlog: Int32 = 64) throws -> (fd: Int32, port: UInt16) {
        let addresses = try resolve(host: host, port: port, passive: true)
        var lastError: (any Error)?
        for address in addresses {
            do {
                let fd = try systemCall("socket") {
                    socket(address.family, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), address.protocolNumber)
                }
                do {
                    try setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1, "setsockopt(SO_REUSEADDR)")
                    if address.family == AF_INET6 {
                        try setOption(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 0, "setsockopt(IPV6_V6ONLY)")
                    }
                    _ = try address.withSockaddr { pointer, length in
                        try systemCall("bind") { bind(fd, pointer, length) }
                    }
                    try systemCall("listen") { Glibc.listen(fd, backlog) }
                    return (fd, try localPort(of: fd))
                } catch {
                    closeDescriptor(fd)
                    throw error
                }
            } catch {
                lastError = error
            }
        }
        throw lastError ?? SecurityError(.addressResolution, "no address to listen on for \(host)")
    }

    /// Waits for and accepts one connection on `listenFD`. Returns a blocking descriptor (TCP_NODELAY on) and the
    /// peer's address as text: "192.0.2.1:5000" for IPv4 (also for IPv4-mapped IPv6), "[2001:db8::1]:5000" for IPv6.
    /// `ECONNABORTED` (a client that gave up while queued) is skipped rather than reported.
    public static func accept(_ listenFD: Int32) throws -> (fd: Int32, peer: String) {
        while true {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    cast_accept_cloexec(listenFD, $0, &length)
                }
            }
            if fd < 0 {
                let code = errno
                if code == EINTR || code == ECONNABORTED { continue }
                throw SecurityError(.system, function: "accept", errno: code, "cannot accept a connection")
            }
            try? setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1, "setsockopt(TCP_NODELAY)")
            enableKeepalive(fd)
            return (fd, addressText(&storage, length: length))
        }
    }

    /// Accepts connections on `listenFD` and hands each to `handle` (on this thread: `handle` starts the connection's
    /// own thread) until accept fails while `isStopped` says the listener was shut down. Any other failure (EMFILE:
    /// out of descriptors) goes to `onFailure` and accept is retried 50 ms later, so that a descriptor shortage does
    /// not spin a core (the back-off nginx and swift-nio use). The one accept loop of every listener in Cast.
    public static func serve(
        _ listenFD: Int32, isStopped: () -> Bool, onFailure: (any Error) -> Void,
        _ handle: (_ fd: Int32, _ peer: String) -> Void
    ) {
        while true {
            let accepted: (fd: Int32, peer: String)
            do {
                accepted = try accept(listenFD)
            } catch {
                if isStopped() { return }
                onFailure(error)
                var pause = timespec(tv_sec: 0, tv_nsec: 50_000_000)
                var left = timespec()
                while nanosleep(&pause, &left) < 0 && errno == EINTR { pause = left }
                continue
            }
            handle(accepted.fd, accepted.peer)
        }
    }

    /// TCP keepalive: a peer that vanished without closing (a phone that slept, a cable pulled) is
    /// found out after `idle` + `count` × `interval` seconds of silence (30 + 3 × 10 = 60 s) instead of
    /// holding an idle half-open connection for hours. Best effort.
    public static func enableKeepalive(_ fd: Int32, idle: Int32 = 30, interval: Int32 = 10, count: Int32 = 3) {
        try? setOption(fd, SOL_SOCKET, SO_KEEPALIVE, 1, "setsockopt(SO_KEEPALIVE)")
        try? setOption(fd, Int32(IPPROTO_TCP), TCP_KEEPIDLE, idle, "setsockopt(TCP_KEEPIDLE)")
        try? setOption(fd, Int32(IPPROTO_TCP), TCP_KEEPINTVL, interval, "setsockopt(TCP_KEEPINTVL)")
        try? setOption(fd, Int32(IPPROTO_TCP), TCP_KEEPCNT, count, "setsockopt(TCP_KEEPCNT)")
    }

    /// Resolves `host` (a name or an address) and connects to `port`, trying each address in turn until one
    /// answers, all within `timeout`. Returns a blocking descriptor with TCP_NODELAY on.
    public static func connect(host: String, port: UInt16, timeout: Duration) throws -> Int32 {
        try connect(host: host, port: port, timeout: timeout, policy: .any)
    }

    /// Like ``connect(host:port:timeout:)``, but only to the addresses `policy` allows: each resolved address is
    /// checked, then connected to as checked (no second resolution). Throws `.refusedAddress` saying why when every
    /// address is refused.
    public static func connect(host: String, port: UInt16, timeout: Duration, policy: AddressPolicy) throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        var addresses = try resolve(host: host, port: port, passive: false)
        if policy != .any {
            let own = IPAddress.interfaceAddresses()
            var refusals: [String] = []
            addresses = addresses.filter { address in
                let ip = address.withSockaddr { pointer, _ in IPAddress(sockaddr: pointer) }
                guard let ip, let refusal = policy.refusal(of: ip, own: own) else { return ip != nil }
                refusals.append(refusal)
                return false
            }
            if addresses.isEmpty {
                let why = refusals.isEmpty ? "no address" : refusals.joined(separator: ", ")
                throw SecurityError(.refusedAddress, "\(host) may not be reached: \(why)")
            }
        }
        var lastError: (any Error)?
        for address in addresses {
            let fd = try systemCall("socket") {
                socket(
                    address.family, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue),
                    address.protocolNumber)
            }
            do {
                try connect(fd, to: address, deadline: deadline, limit: timeout, target: "\(host) port \(port)")
                try setNonBlocking(fd, false)
                try? setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1, "setsockopt(TCP_NODELAY)")
                return fd
            } catch let error as SecurityError where error.kind == .timedOut {
                closeDescriptor(fd)
                throw error  // the deadline covers all addresses, so there is no time left to try the next
            } catch {
                closeDescriptor(fd)
                lastError = error
            }
        }
        throw lastError ?? SecurityError(.addressResolution, "no address found for \(host)")
    }

    // MARK: - Helpers

    private static func connect(
        _ fd: Int32, to address: Address, deadline: ContinuousClock.Instant, limit: Duration, target: String
    ) throws {
        let result = address.withSockaddr { pointer, length in Glibc.connect(fd, pointer, length) }
        if result == 0 { return }
        let code = errno
        // EINTR: the connection attempt goes on asynchronously, exactly like EINPROGRESS.
        guard code == EINPROGRESS || code == EINTR else {
            throw SecurityError(.system, function: "connect", errno: code, "cannot connect to \(target)")
        }
        try waitUntilReady(
            fd, events: Int16(POLLOUT), deadline: deadline, limit: limit, operation: "connecting to \(target)")
        var failure: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        try systemCall("getsockopt(SO_ERROR)") { getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &length) }
        if failure != 0 {
            throw SecurityError(.system, function: "connect", errno: failure, "cannot connect to \(target)")
        }
    }

    private static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32, _ function: String)
        throws
    {
        var value = value
        try systemCall(function) { setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) }
    }

    private static func localPort(of fd: Int32) throws -> UInt16 {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try withUnsafeMutablePointer(to: &storage) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                try systemCall("getsockname") { getsockname(fd, address, &length) }
            }
        }
        return withUnsafeBytes(of: &storage) { raw in
            // sin_port and sin6_port sit at the same offset (2), in network byte order.
            UInt16(bigEndian: raw.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
        }
    }

    /// The address a connected socket was reached at, shown as `accept` shows a peer ("ip:port", "[ip6]:port"); nil
    /// when the socket has none.
    public static func localAddress(of fd: Int32) -> String? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { return nil }
        return addressText(&storage, length: length)
    }

    /// "ip:port", "[ip6]:port"; an IPv4-mapped IPv6 address is shown as plain IPv4.
    private static func addressText(_ storage: inout sockaddr_storage, length: socklen_t) -> String {
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        let result = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getnameinfo(
                    $0, length, &host, socklen_t(host.count), &service, socklen_t(service.count),
                    NI_NUMERICHOST | NI_NUMERICSERV)
            }
        }
        guard result == 0 else { return "unknown" }
        var hostText = host.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        let portText = service.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        if storage.ss_family == sa_family_t(AF_INET6) {
            if hostText.hasPrefix("::ffff:"), hostText.contains(".") {
                hostText.removeFirst("::ffff:".count)
            } else {
                return "[\(hostText)]:\(portText)"
            }
        }
        return "\(hostText):\(portText)"
    }

    /// One result of getaddrinfo, copied out of the C list.
    private struct Address {
        var family: Int32
        var protocolNumber: Int32
        var bytes: [UInt8]

        func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> Result) rethrows -> Result {
            try bytes.withUnsafeBytes { raw in
                try body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
            }
        }
    }

    private static func resolve(host: String, port: UInt16, passive: Bool) throws -> [Address] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0)
        var list: UnsafeMutablePointer<addrinfo>?
        let result = getaddrinfo(host.isEmpty ? nil : host, String(port), &hints, &list)
        guard result == 0 else {
            let reason = result == EAI_SYSTEM ? errnoText(errno) : String(cString: gai_strerror(result))
            throw SecurityError(.addressResolution, function: "getaddrinfo", "cannot resolve \(host): \(reason)")
        }
        defer { freeaddrinfo(list) }
        var addresses: [Address] = []
        var entry = list
        while let current = entry?.pointee {
            if let address = current.ai_addr, current.ai_addrlen > 0 {
                let bytes = Array(UnsafeRawBufferPointer(start: address, count: Int(current.ai_addrlen)))
                addresses.append(Address(family: current.ai_family, protocolNumber: current.ai_protocol, bytes: bytes))
            }
            entry = current.ai_next
        }
        return addresses
    }
}
