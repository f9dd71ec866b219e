/// What one playback session transferred and how it went, in the vocabulary of MPMovieAccessLogEvent.
///
/// The engine fills what it measures (times, bytes, stalls); the receiver adds where the media came from. Sent as
/// the `accessLog` event when playback finishes and when a sender asks (`control {action: accessLog}`). Every
/// number is finite and not negative, every text at most `AccessLogEntry.maximumTextBytes` bytes (decoding refuses
/// anything else).
public struct AccessLogEntry: Codable, Sendable, Equatable {
    /// What plays: the URL (without credentials) or the title the sender gave; nil when unknown.
    public var uri: String?
    /// Where the bytes came from: the http server's `host[:port]` for a URL, the sender's address for served media.
    public var serverAddress: String?
    /// When the engine was asked to play (receiver wall clock, seconds since 1970).
    public var playbackStartDate: Double
    /// Seconds from the play request to the first presented frame or sample; nil when nothing was presented.
    public var startupTime: Double?
    /// The media's own bit rate (bits/s): its size over its duration, or the container's bit rate; nil when unknown.
    public var indicatedBitrate: Double?
    /// The bit rate the input was delivered at (bits/s), over the time spent waiting for it; nil before any read.
    public var observedBitrate: Double?
    /// How many times playback stalled (the input could not keep up).
    public var stalls: Int
    /// Seconds spent stalled, in total.
    public var stallDuration: Double
    /// Video frames that were decoded but never presented.
    public var droppedFrames: Int
    /// Bytes read from the input (the network), including bytes read again after a seek.
    public var bytesTransferred: Int64
    /// Seconds spent waiting for input bytes (reading time: waits for room in a full buffer do not count).
    public var transferDuration: Double
    /// Media seconds presented (time the clock ran, times the playback rate).
    public var durationWatched: Double
    /// Bytes of served media that crossed the link from the sender (castd's count, every reader of the media
    /// connection together: the engine's, the thumbnailer's, the subtitle file's); nil for a URL. Beside `mediaSize`
    /// it shows what was fetched more than once.
    public var bytesFetched: Int64?
    /// The served file's size in bytes, as the sender gave it; nil for a stream or a URL.
    public var mediaSize: Int64?

    /// The longest text field accepted.
    public static let maximumTextBytes = 4096

    /// `text` cut to at most `limit` UTF-8 bytes, at a character boundary: what the initializers do with texts, so
    /// that what a receiver makes always decodes.
    public static func bounded(_ text: String, to limit: Int = maximumTextBytes) -> String {
        guard text.utf8.count > limit else { return text }
        var result = ""
        var bytes = 0
        for character in text {
            bytes += character.utf8.count
            if bytes > limit { break }
            result.append(character)
        }
        return result
    }

    /// Creates an entry.
    public init(
        uri: String? = nil, serverAddress: String? = nil, playbackStartDate: Double, startupTime: Double? = nil,
        indicatedBitrate: Double? = nil, observedBitrate: Double? = nil, stalls: Int = 0, stallDuration: Double = 0,
        droppedFrames: Int = 0, bytesTransferred: Int64 = 0, transferDuration: Double = 0, durationWatched: Double = 0
    ) {
        self.uri = uri.map { Self.bounded($0) }
        self.serverAddress = serverAddress.map { Self.bounded($0) }
        self.playbackStartDate = playbackStartDate
        self.startupTime = startupTime
        self.indicatedBitrate = indicatedBitrate
        self.observedBitrate = observedBitrate
        self.stalls = stalls
        self.stallDuration = stallDuration
        self.droppedFrames = droppedFrames
        self.bytesTransferred = bytesTransferred
        self.transferDuration = transferDuration
        self.durationWatched = durationWatched
    }

    private enum Key: String, CodingKey {
        case uri, serverAddress, playbackStartDate, startupTime, indicatedBitrate, observedBitrate, stalls,
            stallDuration, droppedFrames, bytesTransferred, transferDuration, durationWatched, bytesFetched, mediaSize
    }

    /// Decodes and bounds every field (see the type's comment).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        let bounds = BoundedFields(c)
        uri = try bounds.text(.uri, maximum: Self.maximumTextBytes)
        serverAddress = try bounds.text(.serverAddress, maximum: Self.maximumTextBytes)
        playbackStartDate = try bounds.number(.playbackStartDate)
        startupTime = try bounds.optionalNumber(.startupTime)
        indicatedBitrate = try bounds.optionalNumber(.indicatedBitrate)
        observedBitrate = try bounds.optionalNumber(.observedBitrate)
        stalls = try bounds.count(.stalls)
        stallDuration = try bounds.number(.stallDuration)
        droppedFrames = try bounds.count(.droppedFrames)
        bytesTransferred = Int64(try bounds.count(.bytesTransferred))
        transferDuration = try bounds.number(.transferDuration)
        durationWatched = try bounds.number(.durationWatched)
        bytesFetched = try bounds.optionalCount(.bytesFetched).map(Int64.init)
        mediaSize = try bounds.optionalCount(.mediaSize).map(Int64.init)
    }
}

/// Reads fields of a keyed container with the bounds every log entry shares: texts of bounded length, finite
/// numbers that are not negative.
struct BoundedFields<Key: CodingKey> {
    let c: KeyedDecodingContainer<Key>

    init(_ c: KeyedDecodingContainer<Key>) { self.c = c }

    /// An optional text of at most `maximum` UTF-8 bytes.
    func text(_ key: Key, maximum: Int) throws -> String? {
        guard let value = try c.decodeIfPresent(String.self, forKey: key) else { return nil }
        guard value.utf8.count <= maximum else {
            throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "longer than \(maximum) bytes")
        }
        return value
    }

    /// A finite number, not negative.
    func number(_ key: Key) throws -> Double {
        try checked(c.decode(Double.self, forKey: key), key)
    }

    /// An optional finite number, not negative.
    func optionalNumber(_ key: Key) throws -> Double? {
        try c.decodeIfPresent(Double.self, forKey: key).map { try checked($0, key) }
    }

    /// A whole count, not negative.
    func count(_ key: Key) throws -> Int {
        let value = try c.decode(Int.self, forKey: key)
        guard value >= 0 else {
            throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "negative")
        }
        return value
    }

    /// An optional whole count, not negative.
    func optionalCount(_ key: Key) throws -> Int? {
        try c.contains(key) && !c.decodeNil(forKey: key) ? count(key) : nil
    }

    private func checked(_ value: Double, _ key: Key) throws -> Double {
        guard value.isFinite, value >= 0 else {
            throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "not a finite number ≥ 0")
        }
        return value
    }
}
