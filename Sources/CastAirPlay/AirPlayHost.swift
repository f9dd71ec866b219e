/// Which `Host` a request to the AirPlay server may name: the rule against DNS rebinding, as a value.
///
/// A web page cannot read answers from another origin, unless its own name is made to resolve to the box (DNS
/// rebinding): its requests then reach castd naming the page's host (`Host: evil.example`). So a request must name
/// the box as a client that found it does: the address the connection arrived at (`Host: 192.168.1.20:7000`,
/// `[fe80::1]`), or one of the box's own names (its host name, with `.local` as mDNS gives it; `localhost` on a
/// loopback connection). A request without `Host` (HTTP/1.0; browsers always send one) is accepted.
public struct AirPlayHost: Sendable, Equatable {
    /// The names accepted besides the connection's address, lowercased, without a trailing dot.
    public let names: Set<String>

    /// The box's names: `hostName` and `hostName.local` (and any given in `others`).
    public init(hostName: String, others: [String] = []) {
        var names = Set(others.map(Self.normalised))
        let host = Self.normalised(hostName)
        if !host.isEmpty {
            names.insert(host)
            names.insert(host.hasSuffix(".local") ? String(host.dropLast(6)) : host + ".local")
        }
        self.names = names
    }

    /// Whether a request whose `Host` field is `host` (nil: absent) may be served on a connection that arrived at
    /// `localAddress` (as `TCP` shows an address: `ip:port` or `[ip6]:port`; nil when unknown).
    public func accepts(_ host: String?, localAddress: String?) -> Bool {
        guard let host else { return true }
        let named = Self.normalised(Self.hostPart(of: host))
        guard !named.isEmpty else { return false }
        if let localAddress {
            let local = Self.normalised(Self.hostPart(of: localAddress))
            if named == local { return true }
            if named == "localhost" && (local == "::1" || local.hasPrefix("127.")) { return true }
        }
        return names.contains(named)
    }

    /// "name:port" → "name", "[::1]:7000" → "::1", "[::1]" → "::1"; anything else unchanged.
    public static func hostPart(of text: String) -> Substring {
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return Substring(text) }
            return text[text.index(after: text.startIndex)..<close]
        }
        if let colon = text.firstIndex(of: ":"), text[text.index(after: colon)...].allSatisfy(\.isNumber) {
            return text[..<colon]
        }
        return Substring(text)
    }

    private static func normalised(_ text: some StringProtocol) -> String {
        var lowered = text.lowercased()
        while lowered.hasSuffix(".") { lowered.removeLast() }
        return lowered
    }
}
