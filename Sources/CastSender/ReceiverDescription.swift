import CastBase
public import CastProtocol

/// A receiver a sender can reach: found over mDNS, or given as HOST:PORT.
public struct ReceiverDescription: Sendable, Equatable {
    /// What sort of receiver it is.
    public enum Kind: String, Sendable, Equatable {
        /// A Cast receiver (`castd`, `_castd._tcp`).
        case cast
        /// An AirPlay 1 speaker (`_raop._tcp`): audio only, streamed by `SpeakerPlayback`.
        case speaker = "raop"
    }

    /// A Cast receiver or an AirPlay speaker.
    public var kind: Kind
    /// The DNS-SD instance name (the friendly name, or its replacement after a conflict).
    public var name: String
    /// The receiver's id from its TXT record; empty when given by address.
    public var id: String
    /// The host to connect to: a numeric address when resolved.
    public var host: String
    /// The TCP port.
    public var port: UInt16
    /// The TXT record, when it came from discovery.
    public var record: ServiceRecord?
    /// What the user asked for (a name, an alias's target, an id, a prefix or HOST:PORT), when this receiver was
    /// picked from it (`ReceiverBrowser.resolve`). The sender pins by it: if it names a paired receiver, only that
    /// receiver's key is accepted, whatever the receiver found calls itself (see `ReceiverPin`).
    public var requested: String?

    /// Creates a description.
    public init(
        name: String, id: String, host: String, port: UInt16, record: ServiceRecord? = nil, kind: Kind = .cast,
        requested: String? = nil
    ) {
        self.kind = kind
        self.name = name
        self.id = id
        self.host = host
        self.port = port
        self.record = record
        self.requested = requested
    }

    /// `host:port`, with brackets around an IPv6 address.
    public var address: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// How a user names a receiver on the command line (`--to`, or a verb's NAME).
public enum ReceiverQuery: Sendable, Equatable {
    /// HOST:PORT (`[v6]:port` for IPv6): no discovery needed.
    case address(host: String, port: UInt16)
    /// A name, an id or a prefix of either, resolved against what discovery sees.
    case name(String)

    /// Parses what the user typed. A string whose last `:`-separated part is a port number is an address.
    public init(_ text: String) {
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            let host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if rest.hasPrefix(":"), !host.isEmpty, let port = UInt16(rest.dropFirst()), port > 0 {
                self = .address(host: host, port: port)
                return
            }
        } else if let colon = text.lastIndex(of: ":"), text.firstIndex(of: ":") == colon,
            let port = UInt16(text[text.index(after: colon)...]), port > 0, colon != text.startIndex
        {
            self = .address(host: String(text[..<colon]), port: port)
            return
        }
        self = .name(text)
    }

    /// Picks the receiver the user meant: the instance name case-insensitively, then an exact id,
    /// then a unique case-insensitive prefix of a name or an id. A nil query means "the only one in sight".
    /// - Throws: `CastError` `.noSuchReceiver` naming what is in sight.
    public static func match(_ query: String?, in receivers: [ReceiverDescription]) throws(CastError)
        -> ReceiverDescription
    {
        let inSight =
            receivers.isEmpty
            ? "no receivers are in sight"
            : "receivers in sight: " + receivers.map { "\"\(printable($0.name))\"" }.sorted().joined(separator: ", ")
        guard let query else {
            if receivers.count == 1 { return receivers[0] }
            throw CastError(.noSuchReceiver, "name a receiver with --to; \(inSight)")
        }
        let folded = query.lowercased()
        if let byName = receivers.first(where: { $0.name.lowercased() == folded }) { return byName }
        if let byID = receivers.first(where: { !$0.id.isEmpty && $0.id.lowercased() == folded }) { return byID }
        let prefixed = receivers.filter {
            $0.name.lowercased().hasPrefix(folded) || (!$0.id.isEmpty && $0.id.lowercased().hasPrefix(folded))
        }
        if prefixed.count == 1 { return prefixed[0] }
        if prefixed.count > 1 {
            throw CastError(
                .noSuchReceiver,
                "\"\(printable(query))\" matches several receivers: "
                    + prefixed.map { "\"\(printable($0.name))\"" }.sorted().joined(separator: ", "))
        }
        throw CastError(.noSuchReceiver, "no receiver named \"\(printable(query))\"; \(inSight)")
    }
}
