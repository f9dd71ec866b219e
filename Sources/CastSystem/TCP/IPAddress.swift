import Glibc

/// An IPv4 or IPv6 address as its bytes (4 or 16, network order), with the classes an address policy asks about.
///
/// An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is kept as the IPv4 address it maps, so that it cannot pass for
/// something other than what it reaches.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 (IPv6), network order.
    public let bytes: [UInt8]

    /// The address of `bytes` (4 or 16 of them); nil for any other count.
    public init?(bytes: [UInt8]) {
        if bytes.count == 16, bytes.prefix(10).allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            self.bytes = Array(bytes.suffix(4))
        } else if bytes.count == 4 || bytes.count == 16 {
            self.bytes = bytes
        } else {
            return nil
        }
    }

    /// The address written as text ("192.0.2.1", "fe80::1"); nil when it is not a numeric address.
    public init?(_ text: String) {
        var buffer = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET, text, &buffer) == 1 {
            self.init(bytes: Array(buffer.prefix(4)))
        } else if inet_pton(AF_INET6, text, &buffer) == 1 {
            self.init(bytes: buffer)
        } else {
            return nil
        }
    }

    /// The address of a `sockaddr_in` or `sockaddr_in6` (as getaddrinfo and getifaddrs give them); nil otherwise.
    init?(sockaddr pointer: UnsafePointer<sockaddr>) {
        switch Int32(pointer.pointee.sa_family) {
        case AF_INET:
            let address = pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            self.init(bytes: withUnsafeBytes(of: address) { Array($0) })
        case AF_INET6:
            let address = pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
            self.init(bytes: withUnsafeBytes(of: address) { Array($0) })
        default:
            return nil
        }
    }

    /// Whether this is an IPv4 address.
    public var isIPv4: Bool { bytes.count == 4 }

    /// 127.0.0.0/8, ::1.
    public var isLoopback: Bool { isIPv4 ? bytes[0] == 127 : bytes == [UInt8](repeating: 0, count: 15) + [1] }

    /// 0.0.0.0/8 ("this network", which Linux connects to the host itself), ::.
    public var isUnspecified: Bool { isIPv4 ? bytes[0] == 0 : bytes.allSatisfy { $0 == 0 } }

    /// 169.254.0.0/16 (where cloud metadata services answer), fe80::/10.
    public var isLinkLocal: Bool {
        isIPv4 ? bytes[0] == 169 && bytes[1] == 254 : bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80
    }

    /// 224.0.0.0/4 and the rest of the old class E up to the broadcast address (240.0.0.0/4), ff00::/8.
    public var isMulticastOrBroadcast: Bool { isIPv4 ? bytes[0] >= 224 : bytes[0] == 0xFF }

    public var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        bytes.withUnsafeBytes { raw in
            _ = inet_ntop(isIPv4 ? AF_INET : AF_INET6, raw.baseAddress, &text, socklen_t(text.count))
        }
        return text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// The addresses of this host's interfaces, as `getifaddrs` lists them now (empty when it fails).
    public static func interfaceAddresses() -> Set<IPAddress> {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return [] }
        defer { freeifaddrs(list) }
        var addresses: Set<IPAddress> = []
        var entry = list
        while let current = entry?.pointee {
            if let address = current.ifa_addr, let ip = IPAddress(sockaddr: address) { addresses.insert(ip) }
            entry = current.ifa_next
        }
        return addresses
    }
}
