import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// A socket failure on the way to or from a speaker: the function and its errno text.
struct SpeakerSocketError: Error, CustomStringConvertible {
    let description: String

    init(_ function: String, errno code: Int32 = errno) {
        description = "\(function): \(String(cString: strerror(code)))"
    }

    init(message: String) { description = message }
}

/// A numeric socket address (IPv4 or IPv6, with `%interface` for a link-local one), copied out of getaddrinfo.
struct SocketAddress: Sendable {
    let family: Int32
    private let bytes: [UInt8]

    /// Parses a numeric host (no name lookup) and a port.
    init(host: String, port: UInt16) throws {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list?.pointee,
            let address = first.ai_addr
        else {
            throw SpeakerSocketError(message: "\(host) is not a numeric address")
        }
        defer { freeaddrinfo(list) }
        family = first.ai_family
        bytes = Array(UnsafeRawBufferPointer(start: address, count: Int(first.ai_addrlen)))
    }

    /// The same host with another port.
    func with(port: UInt16) -> SocketAddress {
        var copy = bytes
        // sin_port and sin6_port sit at the same offset (2), in network byte order.
        copy[2] = UInt8(port >> 8)
        copy[3] = UInt8(port & 0xFF)
        return SocketAddress(family: family, bytes: copy)
    }

    private init(family: Int32, bytes: [UInt8]) {
        self.family = family
        self.bytes = bytes
    }

    func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> Result) rethrows -> Result {
        try bytes.withUnsafeBytes { raw in
            try body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
    }

    /// Whether `other` (a received packet's source) is the same host, whatever its port.
    func sameHost(as other: UnsafeRawBufferPointer) -> Bool {
        guard other.count >= 8 else { return false }
        let otherFamily = Int32(other.loadUnaligned(as: sa_family_t.self))
        guard otherFamily == family else { return false }
        if family == AF_INET {
            return bytes[4..<8].elementsEqual(other[4..<8])
        }
        guard other.count >= 24, bytes.count >= 24 else { return false }
        return bytes[8..<24].elementsEqual(other[8..<24])
    }

    /// The numeric text of a connected or bound socket's own address (getsockname).
    static func localHost(of fd: Int32) -> String? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { return nil }
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let named = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getnameinfo($0, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST)
            }
        }
        guard named == 0 else { return nil }
        var text = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text.hasPrefix("::ffff:"), text.contains(".") { text.removeFirst(7) }
        if let percent = text.firstIndex(of: "%") { text = String(text[..<percent]) }
        return text
    }
}

/// One UDP socket bound to a free port (all addresses of the speaker's family), with a receive timeout so that
/// a reading thread notices when it should stop.
///
/// Thread-safety: `send` and `receive` may run on different threads at once (the kernel orders them); `close`
/// only after every user has stopped.
final class UDPSocket: Sendable {
    /// Set once in init and closed once in `close`, after the threads using it have ended.
    let fd: Int32
    /// The bound port.
    let port: UInt16

    init(family: Int32, receiveTimeoutMilliseconds: Int = 200) throws {
        let fd = socket(family, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SpeakerSocketError("socket(UDP)") }
        var storage = sockaddr_storage()
        storage.ss_family = sa_family_t(family)
        let size = family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size
        let bound = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(size)) }
        }
        guard bound == 0 else {
            let code = errno
            Glibc.close(fd)
            throw SpeakerSocketError("bind(UDP)", errno: code)
        }
        var timeout = timeval(
            tv_sec: receiveTimeoutMilliseconds / 1000, tv_usec: (receiveTimeoutMilliseconds % 1000) * 1000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = withUnsafeBytes(of: &storage) { UInt16(bigEndian: $0.loadUnaligned(fromByteOffset: 2, as: UInt16.self)) }
        self.fd = fd
    }

    /// Sends one datagram; errors (an ICMP unreachable reported on a later send) are returned, not thrown: UDP
    /// loss is normal, and the RTSP connection is what says the speaker went away.
    @discardableResult
    func send(_ bytes: [UInt8], to address: SocketAddress) -> Int32 {
        let sent = bytes.withUnsafeBytes { raw in
            address.withSockaddr { sendto(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL), $0, $1) }
        }
        return sent < 0 ? errno : 0
    }

    /// One datagram of at most `limit` bytes (longer ones are cut, and so malformed) and its source, or nil
    /// after the receive timeout (or on an error, which the caller treats the same way).
    func receive(limit: Int = 2048) -> (bytes: [UInt8], source: [UInt8])? {
        var buffer = [UInt8](repeating: 0, count: limit + 1)
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let count = buffer.withUnsafeMutableBytes { raw in
            withUnsafeMutablePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    recvfrom(fd, raw.baseAddress, raw.count, 0, $0, &length)
                }
            }
        }
        guard count >= 0 else { return nil }
        let source = withUnsafeBytes(of: &storage) { Array($0.prefix(Int(length))) }
        return (Array(buffer.prefix(min(count, limit + 1))), source)
    }

    func close() { Glibc.close(fd) }
}
