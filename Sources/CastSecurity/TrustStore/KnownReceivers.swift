import CastProtocol
public import CastSystem
public import FoundationEssentials

/// The sender's pinned receivers: receiver id → public key (and name), recorded when pairing succeeds.
///
/// Kept in `$XDG_CONFIG_HOME/cast/known-receivers.json` (mode 0600):
///
///     {
///       "receivers" : {
///         "<receiver id>" : {
///           "address" : "10.0.0.5:7100", "name" : "Living Room", "pairedAt" : "2025-01-31T18:02:11Z",
///           "publicKey" : "<64 hex>"
///         }
///       },
///       "version" : 1
///     }
///
/// `address` is where the receiver was last reached (`host:port`), so that a sender told an address can tell
/// which paired receiver must answer there; entries without it (older files) are read as having none. Which
/// entries a connection must match is CastKit's rule (`ReceiverPin`); a receiver that shows another key must
/// be refused with a warning naming both ids, never silently re-pinned: only a new `cast pair` (which calls
/// `pin`) replaces it.
/// See `TrustStoreFile` for the reading and writing rules.
///
/// Thread-safety: `Sendable`; every method may be called from any thread.
public final class KnownReceivers: Sendable {
    /// The file name inside the sender's configuration directory.
    public static let fileName = "known-receivers.json"

    private let file: TrustStoreFile<Document>

    private init(file: TrustStoreFile<Document>) {
        self.file = file
    }

    /// Loads the store from `directory`; a missing file is an empty store (the file appears on first `pin`).
    /// - Throws: `SecurityError` `.trustStore` for a corrupt, oversized or too permissive file (left untouched),
    ///   `.system` when it cannot be read.
    public static func load(directory: String) throws(SecurityError) -> KnownReceivers {
        KnownReceivers(file: try TrustStoreFile(directory: directory, fileName: fileName))
    }

    /// The full path of the file.
    public var path: String { file.path }

    /// Every known receiver, ordered by name.
    public func list() throws(SecurityError) -> [KnownReceiver] {
        try file.current().receivers.values.sorted { ($0.name, $0.id) < ($1.name, $1.id) }
    }

    /// The receiver pinned under this id, if any.
    public func lookup(id: String) throws(SecurityError) -> KnownReceiver? {
        try file.current().receivers[id.lowercased()]
    }

    /// The receivers pinned under this name (case-insensitive): normally none or one.
    public func lookup(name: String) throws(SecurityError) -> [KnownReceiver] {
        try list().filter { $0.name.matchesIgnoringCase(name) }
    }

    /// Pins a receiver after a successful pairing and saves. An entry with the same id, or with the same name
    /// (case-insensitive; the user just re-paired with whatever now answers to that name), is replaced.
    /// - Parameters:
    ///   - id: the receiver's id as advertised (the fingerprint of `publicKey`).
    ///   - publicKey: its 32-byte Ed25519 key, as its TLS certificate showed it.
    ///   - name: its friendly name (at most 1024 UTF-8 bytes).
    ///   - address: where it was reached (`host:port`), if known; no other entry keeps this address.
    /// - Throws: `.trustStore` when the store is full (1000 receivers) or its file is unusable; `.system`
    ///   when it cannot be written. Then nothing changed, in memory or on disk.
    @discardableResult
    public func pin(id: String, publicKey: [UInt8], name: String, address: String? = nil, pairedAt: Date = Date())
        throws(SecurityError) -> KnownReceiver
    {
        precondition(publicKey.count == 32, "an Ed25519 public key has 32 bytes")
        precondition(!id.isEmpty && id.utf8.count <= 128, "a receiver id is a short fingerprint")
        guard name.utf8.count <= TrustStoreLimits.maximumNameLength else {
            throw SecurityError(.trustStore, "receiver name longer than \(TrustStoreLimits.maximumNameLength) bytes")
        }
        try checkAddress(address)
        let receiver = KnownReceiver(
            id: id.lowercased(), publicKey: publicKey, name: name, pairedAt: wholeSeconds(pairedAt), address: address)
        try file.update { (document: inout Document) throws(SecurityError) in
            document.receivers = document.receivers.filter {
                !$0.value.name.matchesIgnoringCase(name)
            }
            if let address { document.forget(address: address) }
            document.receivers[receiver.id] = receiver
        }
        return receiver
    }

    /// Records that the paired receiver `id` was reached at `address` (`host:port`) after its key was checked, and
    /// takes the address from any other entry (an address answers for one receiver at a time). Saves only when
    /// something changed, so an unchanged address costs a read and no write.
    /// - Returns: false when `id` is not a paired receiver (nothing is recorded).
    /// - Throws: `.trustStore` for an address over 300 bytes or an unusable file; `.system` when it cannot be written.
    @discardableResult
    public func recordAddress(_ address: String, forID id: String) throws(SecurityError) -> Bool {
        try checkAddress(address)
        let id = id.lowercased()
        let current = try file.current()
        guard let entry = current.receivers[id] else { return false }
        let elsewhere = current.receivers.values.contains { $0.id != id && $0.address == address }
        if entry.address == address && !elsewhere { return true }
        return try file.update { (document: inout Document) throws(SecurityError) -> Bool in
            guard let entry = document.receivers[id] else { return false }
            document.forget(address: address)
            document.receivers[id] = KnownReceiver(
                id: entry.id, publicKey: entry.publicKey, name: entry.name, pairedAt: entry.pairedAt, address: address)
            return true
        }
    }

    private func checkAddress(_ address: String?) throws(SecurityError) {
        guard let address else { return }
        guard !address.isEmpty, address.utf8.count <= KnownReceiver.maximumAddressLength else {
            throw SecurityError(
                .trustStore, "receiver address empty or longer than \(KnownReceiver.maximumAddressLength) bytes")
        }
    }

    /// Forgets the receiver whose id equals `nameOrId`, else those whose name equals it (case-insensitive),
    /// else the one whose id starts with it (at least 4 characters), and saves.
    public func remove(_ nameOrId: String) throws(SecurityError) -> TrustStoreRemoval<KnownReceiver> {
        let wanted = nameOrId.lowercased()
        return try file.update { (document: inout Document) throws(SecurityError) -> TrustStoreRemoval<KnownReceiver> in
            let all = document.receivers.values.sorted { $0.id < $1.id }
            var matches = all.filter { $0.id == wanted }
            if matches.isEmpty { matches = all.filter { $0.name.matchesIgnoringCase(nameOrId) } }
            if matches.isEmpty && wanted.count >= 4 { matches = all.filter { $0.id.hasPrefix(wanted) } }
            switch matches.count {
            case 0: return .notFound
            case 1:
                document.receivers[matches[0].id] = nil
                return .removed(matches[0])
            default: return .ambiguous(matches)
            }
        }
    }

    /// The file's shape.
    struct Document: TrustStoreDocument {
        var version = 1
        var receivers: [String: KnownReceiver] = [:]

        static var empty: Document { Document() }
        var entryCount: Int { receivers.count }

        init() {}

        /// Removes `address` from every entry that has it.
        mutating func forget(address: String) {
            for (id, entry) in receivers where entry.address == address {
                receivers[id] = KnownReceiver(
                    id: entry.id, publicKey: entry.publicKey, name: entry.name, pairedAt: entry.pairedAt, address: nil)
            }
        }

        private enum CodingKeys: String, CodingKey {
            case version, receivers
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            version = try container.decode(Int.self, forKey: .version)
            guard version == 1 else {
                throw DecodingError.dataCorruptedError(
                    forKey: .version, in: container, debugDescription: "version \(version) is newer than this build")
            }
            let entries = try container.decode([String: KnownReceiver.Stored].self, forKey: .receivers)
            for (id, entry) in entries {
                guard !id.isEmpty, id.utf8.count <= 128, id == id.lowercased() else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .receivers, in: container, debugDescription: "bad receiver id '\(id.prefix(40))'")
                }
                receivers[id] = KnownReceiver(
                    id: id, publicKey: entry.publicKey, name: entry.name, pairedAt: entry.pairedAt,
                    address: entry.address)
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(version, forKey: .version)
            try container.encode(receivers.mapValues(KnownReceiver.Stored.init), forKey: .receivers)
        }
    }
}

/// A receiver this sender paired with.
public struct KnownReceiver: Sendable, Equatable {
    /// The receiver's id (the fingerprint of its key when pinned), lowercase.
    public let id: String
    /// The receiver's 32-byte Ed25519 public key.
    public let publicKey: [UInt8]
    /// The receiver's friendly name when it paired.
    public let name: String
    /// When it paired (whole seconds).
    public let pairedAt: Date
    /// Where it was last reached after its key was checked (`host:port` as the sender connected to it), if known.
    public let address: String?

    /// The longest address (UTF-8 bytes) an entry keeps: a bracketed IPv6 address with a zone and a port fits.
    public static let maximumAddressLength = 300

    /// Creates an entry.
    public init(id: String, publicKey: [UInt8], name: String, pairedAt: Date, address: String? = nil) {
        self.id = id
        self.publicKey = publicKey
        self.name = name
        self.pairedAt = pairedAt
        self.address = address
    }

    /// The form inside the file, where the id is the key of the map.
    struct Stored: Codable, Sendable {
        let publicKey: [UInt8]
        let name: String
        let pairedAt: Date
        let address: String?

        init(_ receiver: KnownReceiver) {
            publicKey = receiver.publicKey
            name = receiver.name
            pairedAt = receiver.pairedAt
            address = receiver.address
        }

        private enum CodingKeys: String, CodingKey {
            case publicKey, name, pairedAt, address
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            publicKey = try container.decodePublicKey(forKey: .publicKey)
            name = try container.decodeName(forKey: .name)
            pairedAt = try container.decode(Date.self, forKey: .pairedAt)
            address = try container.decodeIfPresent(String.self, forKey: .address)
            if let address, address.isEmpty || address.utf8.count > KnownReceiver.maximumAddressLength {
                throw DecodingError.dataCorruptedError(forKey: .address, in: container, debugDescription: "bad address")
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(hexString(publicKey), forKey: .publicKey)
            try container.encode(name, forKey: .name)
            try container.encode(pairedAt, forKey: .pairedAt)
            try container.encodeIfPresent(address, forKey: .address)
        }
    }
}
