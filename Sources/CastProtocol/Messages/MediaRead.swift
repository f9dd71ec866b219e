/// Receiver → sender on a media connection: send `length` bytes from `offset`.
public struct MediaRead: Codable, Sendable, Equatable {
    /// The byte offset.
    public var offset: Int64
    /// How many bytes, at most `MediaRead.maximumLength`.
    public var length: Int
    /// Which of the served files: absent or `MediaRead.media` for the media, `MediaRead.subtitles` for the play
    /// request's subtitle file.
    public var resource: Int?

    /// The resource numbers.
    public static let media = 0
    public static let subtitles = 1

    /// The largest read: bounds what one request can make either side buffer.
    public static let maximumLength = 1 << 20

    /// Creates a read.
    public init(offset: Int64, length: Int, resource: Int? = nil) {
        self.offset = offset
        self.length = length
        self.resource = resource == MediaRead.media ? nil : resource
    }
}

extension MediaRead: MessageBody {
    func check() throws(ProtocolError) {
        guard offset >= 0, length > 0, length <= MediaRead.maximumLength else {
            throw ProtocolError(
                .malformedMessage, "mediaRead needs offset ≥ 0 and length 1...\(MediaRead.maximumLength)")
        }
        guard resource == nil || resource == MediaRead.media || resource == MediaRead.subtitles else {
            throw ProtocolError(.malformedMessage, "mediaRead.resource must be 0 (the media) or 1 (subtitles)")
        }
    }
}
