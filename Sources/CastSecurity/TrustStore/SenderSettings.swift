public import CastSystem
import FoundationEssentials

/// The sender's own settings, as `cast config` sets them: a default receiver and aliases.
///
/// Kept in `$XDG_CONFIG_HOME/cast/settings.json` (mode 0600), beside the trust stores and written the same
/// way (locked, atomic, bounded: see `TrustStoreFile`), so two `cast config` runs never lose each other's
/// change and a crash never leaves half a file:
///
///     {
///       "aliases" : { "tv" : "Living Room" },
///       "defaultReceiver" : "Living Room",
///       "version" : 1
///     }
///
/// A receiver name given on the command line is looked up as an alias first (case-insensitive); without a
/// name, the default receiver is used. Values are receiver queries as `--to` takes them (a name, an id, a
/// prefix or HOST:PORT), stored as typed and resolved when used.
///
/// Thread-safety: `Sendable`; every method may be called from any thread.
public final class SenderSettings: Sendable {
    /// The file name inside the sender's configuration directory.
    public static let fileName = "settings.json"
    /// The longest alias name, in characters.
    public static let maximumAliasLength = 64

    private let file: TrustStoreFile<Document>

    private init(file: TrustStoreFile<Document>) {
        self.file = file
    }

    /// Loads the settings from `directory`; a missing file means no default and no aliases.
    /// - Throws: `SecurityError` `.trustStore` for a corrupt, oversized or too permissive file (left untouched),
    ///   `.system` when it cannot be read.
    public static func load(directory: String) throws(SecurityError) -> SenderSettings {
        SenderSettings(file: try TrustStoreFile(directory: directory, fileName: fileName))
    }

    /// The full path of the file.
    public var path: String { file.path }

    /// The receiver used when a verb is given none.
    public func defaultReceiver() throws(SecurityError) -> String? {
        try file.current().defaultReceiver
    }

    /// Every alias (lowercase name → receiver query).
    public func aliases() throws(SecurityError) -> [String: String] {
        try file.current().aliases
    }

    /// What a receiver argument means: an alias's target, the argument itself, or (when nil) the default (which may
    /// itself be an alias).
    public func resolve(_ query: String?) throws(SecurityError) -> String? {
        let document = try file.current()
        guard let query = query ?? document.defaultReceiver else { return nil }
        return document.aliases[query.lowercased()] ?? query
    }

    /// Sets (or, with nil, clears) the default receiver and saves.
    public func setDefaultReceiver(_ query: String?) throws(SecurityError) {
        if let query { try Self.check(query: query) }
        try file.update { (document: inout Document) throws(SecurityError) in document.defaultReceiver = query }
    }

    /// Makes `alias` stand for `query` (replacing an alias of that name) and saves.
    /// - Throws: `.trustStore` for a bad alias name (empty, longer than 64 characters, containing ':' or
    ///   whitespace, or starting with '-'), a bad query, or a full file (1000 aliases).
    public func setAlias(_ alias: String, to query: String) throws(SecurityError) {
        try Self.check(alias: alias)
        try Self.check(query: query)
        try file.update { (document: inout Document) throws(SecurityError) in
            document.aliases[alias.lowercased()] = query
        }
    }

    /// Removes an alias and saves; false when there was none.
    @discardableResult
    public func removeAlias(_ alias: String) throws(SecurityError) -> Bool {
        try file.update { (document: inout Document) throws(SecurityError) -> Bool in
            document.aliases.removeValue(forKey: alias.lowercased()) != nil
        }
    }

    static func check(alias: String) throws(SecurityError) {
        guard let problem = problem(withAlias: alias) else { return }
        throw SecurityError(.trustStore, "bad alias '\(alias.prefix(80))': \(problem)")
    }

    static func problem(withAlias alias: String) -> String? {
        if alias.isEmpty { return "it is empty" }
        if alias.count > maximumAliasLength { return "longer than \(maximumAliasLength) characters" }
        if alias.hasPrefix("-") { return "it starts with '-'" }
        if alias.contains(where: {
            $0 == ":" || $0.isWhitespace || $0.unicodeScalars.contains { $0.properties.generalCategory == .control }
        }) {
            return "it contains ':', a space or a control character"
        }
        return nil
    }

    static func check(query: String) throws(SecurityError) {
        guard !query.isEmpty, query.utf8.count <= TrustStoreLimits.maximumNameLength,
            !query.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw SecurityError(
                .trustStore,
                "a receiver must be 1 to \(TrustStoreLimits.maximumNameLength) bytes without control characters")
        }
    }

    /// The file's shape.
    struct Document: TrustStoreDocument {
        var version = 1
        var defaultReceiver: String?
        var aliases: [String: String] = [:]

        static var empty: Document { Document() }
        var entryCount: Int { aliases.count }

        init() {}

        private enum CodingKeys: String, CodingKey {
            case version, defaultReceiver, aliases
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            version = try container.decode(Int.self, forKey: .version)
            guard version == 1 else {
                throw DecodingError.dataCorruptedError(
                    forKey: .version, in: container, debugDescription: "version \(version) is newer than this build")
            }
            defaultReceiver = try container.decodeIfPresent(String.self, forKey: .defaultReceiver)
            if let defaultReceiver, (try? SenderSettings.check(query: defaultReceiver)) == nil {
                throw DecodingError.dataCorruptedError(
                    forKey: .defaultReceiver, in: container, debugDescription: "bad default receiver")
            }
            let stored = try container.decodeIfPresent([String: String].self, forKey: .aliases) ?? [:]
            for (alias, query) in stored {
                guard SenderSettings.problem(withAlias: alias) == nil, alias == alias.lowercased(),
                    (try? SenderSettings.check(query: query)) != nil
                else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .aliases, in: container, debugDescription: "bad alias '\(alias.prefix(40))'")
                }
            }
            aliases = stored
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(version, forKey: .version)
            try container.encodeIfPresent(defaultReceiver, forKey: .defaultReceiver)
            try container.encode(aliases, forKey: .aliases)
        }
    }
}
