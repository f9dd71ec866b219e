/// Metadata of what plays: the container's tags (title, artist, album, comment, ...), whether it carries artwork
/// (an attached picture), and tags that change while a stream plays (ID3 in a stream, ICY `StreamTitle`). Sent as
/// the `metadata` event once after probing and again whenever the tags change; each event holds the whole set.
///
/// Bounded both ways: at most `maximumItems` items, keys of at most `maximumKeyBytes` bytes, values of at most
/// `maximumValueBytes` bytes. `init(items:artwork:)` trims what is over (values cut at a character boundary, keys in
/// sorted order kept first); decoding refuses it.
public struct TimedMetadata: Codable, Sendable, Equatable {
    /// The tags, keys in lower case as FFmpeg names them (`title`, `artist`, `album`, `comment`, `StreamTitle`).
    public var items: [String: String]
    /// Whether the media carries a picture (cover art) as an attached-picture stream.
    public var artwork: Bool

    /// The most items an event carries.
    public static let maximumItems = 64
    /// The longest key, in UTF-8 bytes.
    public static let maximumKeyBytes = 64
    /// The longest value, in UTF-8 bytes.
    public static let maximumValueBytes = 1024

    /// The metadata, trimmed to the bounds.
    public init(items: [String: String], artwork: Bool) {
        var kept: [String: String] = [:]
        for key in items.keys.sorted() where key.utf8.count <= Self.maximumKeyBytes && !key.isEmpty {
            guard kept.count < Self.maximumItems, let value = items[key] else { break }
            kept[key] = Self.truncated(value)
        }
        self.items = kept
        self.artwork = artwork
    }

    /// `value` cut to at most `maximumValueBytes` bytes, at a character boundary.
    static func truncated(_ value: String) -> String { AccessLogEntry.bounded(value, to: maximumValueBytes) }

    private enum Key: String, CodingKey {
        case items = "metadata"
        case artwork
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(items, forKey: .items)
        try c.encode(artwork, forKey: .artwork)
    }

    /// Decodes; refuses more than `maximumItems` items, an empty or long key, a long value.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        let items = try c.decode([String: String].self, forKey: .items)
        guard items.count <= Self.maximumItems else {
            throw DecodingError.dataCorruptedError(
                forKey: .items, in: c, debugDescription: "more than \(Self.maximumItems) items")
        }
        for (key, value) in items {
            guard !key.isEmpty, key.utf8.count <= Self.maximumKeyBytes, value.utf8.count <= Self.maximumValueBytes
            else {
                throw DecodingError.dataCorruptedError(
                    forKey: .items, in: c, debugDescription: "a key or value is too long")
            }
        }
        self.items = items
        self.artwork = try c.decode(Bool.self, forKey: .artwork)
    }
}
