public import CastSystem
public import FoundationEssentials

/// The receiver's list of paired senders: who may control it without a PIN.
///
/// Kept in `<state directory>/paired-senders.json` (mode 0600):
///
///     {
///       "senders" : [
///         { "name" : "alice@laptop", "pairedAt" : "2025-01-31T18:02:11Z", "publicKey" : "<64 hex digits>" }
///       ],
///       "version" : 1
///     }
///
/// See `TrustStoreFile` for the rules on reading (refusals of corrupt, oversized or loosely permissioned
/// files) and writing (atomic, crash-safe, safe against concurrent writers in other processes). Reads
/// notice changes made by another process (e.g. `castd --unpair` while `castd` runs).
///
/// Thread-safety: `Sendable`; every method may be called from any thread.
public final class PairedSenders: Sendable {
    /// The file name inside the state directory.
    public static let fileName = "paired-senders.json"

    private let file: TrustStoreFile<Document>

    private init(file: TrustStoreFile<Document>) {
        self.file = file
    }

    /// Loads the store from `directory`; a missing file is an empty store (the file appears on first `add`).
    /// - Throws: `SecurityError` `.trustStore` for a corrupt, oversized or too permissive file (left untouched),
    ///   `.system` when it cannot be read.
    public static func load(directory: String) throws(SecurityError) -> PairedSenders {
        PairedSenders(file: try TrustStoreFile(directory: directory, fileName: fileName))
    }

    /// The full path of the file.
    public var path: String { file.path }

    /// Every paired sender, oldest first.
    public func list() throws(SecurityError) -> [PairedSender] {
        try file.current().senders
    }

    /// Whether a sender with this Ed25519 public key is paired.
    public func contains(publicKey: [UInt8]) throws(SecurityError) -> Bool {
        try file.current().senders.contains { $0.publicKey == publicKey }
    }

    /// Records a newly paired sender and saves. Pairing the same key again replaces its name and date.
    /// - Parameters:
    ///   - publicKey: the sender's 32-byte Ed25519 key, as its TLS certificate showed it.
    ///   - name: how the sender called itself (at most 1024 UTF-8 bytes).
    /// - Throws: `.trustStore` when the store is full (1000 senders) or its file is unusable; `.system` when
    ///   it cannot be written. Then nothing changed, in memory or on disk.
    @discardableResult
    public func add(publicKey: [UInt8], name: String, pairedAt: Date = Date()) throws(SecurityError) -> PairedSender {
        precondition(publicKey.count == 32, "an Ed25519 public key has 32 bytes")
        guard name.utf8.count <= TrustStoreLimits.maximumNameLength else {
            throw SecurityError(.trustStore, "sender name longer than \(TrustStoreLimits.maximumNameLength) bytes")
        }
        let sender = PairedSender(publicKey: publicKey, name: name, pairedAt: wholeSeconds(pairedAt))
        try file.update { (document: inout Document) throws(SecurityError) in
            document.senders.removeAll { $0.publicKey == publicKey }
            document.senders.append(sender)
        }
        return sender
    }

    /// Unpairs the sender whose id (see `PairedSender.id`) or public key hex equals `idOrPrefix` or starts
    /// with it (case-insensitive; at least 4 characters for a prefix), and saves.
    public func remove(_ idOrPrefix: String) throws(SecurityError) -> TrustStoreRemoval<PairedSender> {
        let wanted = idOrPrefix.lowercased()
        return try file.update { (document: inout Document) throws(SecurityError) -> TrustStoreRemoval<PairedSender> in
            let exact = document.senders.filter { $0.id == wanted || hexString($0.publicKey) == wanted }
            let matches =
                exact.isEmpty && wanted.count >= 4
                ? document.senders.filter { $0.id.hasPrefix(wanted) || hexString($0.publicKey).hasPrefix(wanted) }
                : exact
            switch matches.count {
            case 0: return .notFound
            case 1:
                document.senders.removeAll { $0.publicKey == matches[0].publicKey }
                return .removed(matches[0])
            default: return .ambiguous(matches)
            }
        }
    }

    /// The file's shape.
    struct Document: TrustStoreDocument {
        var version = 1
        var senders: [PairedSender] = []

        static var empty: Document { Document() }
        var entryCount: Int { senders.count }

        init() {}

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            version = try container.decode(Int.self, forKey: .version)
            guard version == 1 else {
                throw DecodingError.dataCorruptedError(
                    forKey: .version, in: container, debugDescription: "version \(version) is newer than this build")
            }
            senders = try container.decode([PairedSender].self, forKey: .senders)
        }
    }
}

/// A sender that paired with this receiver.
public struct PairedSender: Codable, Sendable, Equatable {
    /// The sender's 32-byte Ed25519 public key (hex in the file).
    public let publicKey: [UInt8]
    /// How the sender called itself when it paired.
    public let name: String
    /// When it paired (whole seconds).
    public let pairedAt: Date

    /// The sender's id: the fingerprint of its key, as `castd --list-paired` shows it and `--unpair` takes it.
    public var id: String { fingerprint(ofPublicKey: publicKey) }

    /// Creates an entry.
    public init(publicKey: [UInt8], name: String, pairedAt: Date) {
        self.publicKey = publicKey
        self.name = name
        self.pairedAt = pairedAt
    }

    private enum CodingKeys: String, CodingKey {
        case publicKey, name, pairedAt
    }

    /// Decodes an entry, refusing a key that is not 32 bytes of hex or a name over 1024 bytes.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        publicKey = try container.decodePublicKey(forKey: .publicKey)
        name = try container.decodeName(forKey: .name)
        pairedAt = try container.decode(Date.self, forKey: .pairedAt)
    }

    /// Encodes the entry with the key in lowercase hex.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(hexString(publicKey), forKey: .publicKey)
        try container.encode(name, forKey: .name)
        try container.encode(pairedAt, forKey: .pairedAt)
    }
}
