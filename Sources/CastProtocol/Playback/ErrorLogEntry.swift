/// One failure of a playback session, in the vocabulary of MPMovieErrorLogEvent. Sent as the `errorLog` event when
/// it happens (before the `finished` event it causes). Texts are at most `AccessLogEntry.maximumTextBytes` bytes
/// (`domain` 64), numbers finite (the initializer cuts longer texts, decoding refuses them).
public struct ErrorLogEntry: Codable, Sendable, Equatable {
    /// When it happened (receiver wall clock, seconds since 1970).
    public var date: Double
    /// What was playing: the URL (without credentials) or the title the sender gave.
    public var uri: String?
    /// Where the bytes came from (as in `AccessLogEntry.serverAddress`).
    public var serverAddress: String?
    /// The status: the HTTP status for a server's refusal (`domain` `http`), the AVERROR for FFmpeg (`ffmpeg`), the
    /// errno for the system (`system`), the ALSA status (`alsa`); nil when the failure has none (`source`, `other`).
    public var statusCode: Int?
    /// Which layer failed: `http`, `ffmpeg`, `system`, `alsa`, `source` (the sender or its connection), `other`.
    public var domain: String
    /// The message, with FFmpeg's own text.
    public var comment: String

    /// Creates an entry.
    public init(
        date: Double, uri: String? = nil, serverAddress: String? = nil, statusCode: Int? = nil, domain: String,
        comment: String
    ) {
        self.date = date
        self.uri = uri.map { AccessLogEntry.bounded($0) }
        self.serverAddress = serverAddress.map { AccessLogEntry.bounded($0) }
        self.statusCode = statusCode
        self.domain = AccessLogEntry.bounded(domain, to: 64)
        self.comment = AccessLogEntry.bounded(comment)
    }

    private enum Key: String, CodingKey { case date, uri, serverAddress, statusCode, domain, comment }

    /// Decodes and bounds every field.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        let bounds = BoundedFields(c)
        let limit = AccessLogEntry.maximumTextBytes
        date = try bounds.number(.date)
        uri = try bounds.text(.uri, maximum: limit)
        serverAddress = try bounds.text(.serverAddress, maximum: limit)
        statusCode = try c.decodeIfPresent(Int.self, forKey: .statusCode)
        guard let domain = try bounds.text(.domain, maximum: 64) else {
            throw DecodingError.keyNotFound(Key.domain, .init(codingPath: c.codingPath, debugDescription: "no domain"))
        }
        self.domain = domain
        guard let comment = try bounds.text(.comment, maximum: limit) else {
            throw DecodingError.keyNotFound(
                Key.comment, .init(codingPath: c.codingPath, debugDescription: "no comment"))
        }
        self.comment = comment
    }
}
