import CastBase

/// Sender → receiver: play this. Exactly one of `media` (a file the sender serves over a media connection) and `url`
/// (an http(s) URL the receiver opens itself) is given; `Message` decoding refuses anything else.
public struct PlayRequest: Codable, Sendable, Equatable, CustomStringConvertible {
    /// What the sender calls it (the file name, or the URL), shown in status and logs.
    public var title: String
    /// Where the media comes from when the sender serves it; nil for a URL.
    public var media: MediaDescriptor?
    /// An `http://` or `https://` URL the receiver opens itself (at most `PlayRequest.maximumURLLength` bytes,
    /// printable ASCII, no userinfo: credentials travel in `username` and `password`); nil for served media.
    public var url: String?
    /// The user name for HTTP authentication (basic or digest) of `url`, when the server asks; no ':'.
    public var username: String?
    /// The password that goes with `username`.
    public var password: String?
    /// Where to start, in seconds (MPMoviePlayerController.initialPlaybackTime); nil = the beginning.
    public var startTime: Double?
    /// The language of the audio track to play when the media has several (ISO 639, 2 or 3 ASCII letters); nil, or
    /// a language no track has: the media's default track.
    public var audioLanguage: String?
    /// `false`: load, show the first picture and wait paused for `resume` (MPMoviePlayerController.shouldAutoplay
    /// off; a stream is opened but does not start). Nil or `true`: play at once.
    public var autoplay: Bool?
    /// The subtitle track to show: its language (ISO 639, 2 or 3 ASCII letters) or "off" for none; nil, or a language
    /// no track has: the track the media marks forced or default, if any (as mpv).
    public var subtitleLanguage: String?
    /// A subtitle file the sender serves beside the media (`cast send movie.mkv --subtitles movie.srt`), read by the
    /// receiver over the same media connection as resource 1 (`MediaRead.resource`) and shown instead of the media's
    /// own tracks. Only with `media`.
    public var subtitles: SubtitleFile?
    /// The receivers this one plays in step with, itself included, as the sender names them (`cast send --to A --to
    /// B`): shown by `status`, nothing else. At most `maximumGroupSize` names.
    public var group: [String]?
    /// Where this source plays in the sender's queue (`cast queue`): shown by `status`, and how `cast next` and
    /// `cast previous` elsewhere know that a queue plays here; nil for a single source.
    public var queue: QueuePlace?
    /// `true`: a `mirror` session (`cast mirror`): `media` is a stream (not seekable, no size) of the sender's screen
    /// in `MirrorStream` units, which the receiver shows as soon as each is decoded (live: no seeking, no read-ahead,
    /// no clock but the frames'). Only with `media`.
    public var mirror: Bool?

    /// The most names `group` holds.
    public static let maximumGroupSize = 16
    /// The longest `url` accepted.
    public static let maximumURLLength = 4096
    /// The URL schemes a receiver opens.
    public static let urlSchemes: Set<String> = ["http", "https"]
    /// The start times accepted, in seconds: as a seek's positions (0...10⁷, about 115 days), so that no number a
    /// sender sends overflows the engine's integer timestamps (a `Double` beyond 9.2·10¹² s does in microseconds).
    public static let startTimes: ClosedRange<Double> = 0...1e7

    /// A request for media the sender serves.
    public init(title: String, media: MediaDescriptor, startTime: Double? = nil) {
        self.title = title
        self.media = media
        self.startTime = startTime
    }

    /// A request for an http(s) URL the receiver opens, with credentials when the server needs them.
    public init(title: String, url: String, username: String? = nil, password: String? = nil, startTime: Double? = nil)
    {
        self.title = title
        self.url = url
        self.username = username
        self.password = password
        self.startTime = startTime
    }

    /// The request with the password left out, so that logging it never shows a credential.
    public var description: String {
        var parts = ["title: \(title)"]
        if let media { parts.append("media: \(media)") }
        if let url { parts.append("url: \(url)") }
        if let username { parts.append("username: \(username)") }
        if password != nil { parts.append("password: <redacted>") }
        if let startTime { parts.append("startTime: \(startTime)") }
        if let audioLanguage { parts.append("audioLanguage: \(audioLanguage)") }
        if let autoplay { parts.append("autoplay: \(autoplay)") }
        if let subtitleLanguage { parts.append("subtitleLanguage: \(subtitleLanguage)") }
        if let subtitles { parts.append("subtitles: \(subtitles.size) bytes") }
        if let mirror { parts.append("mirror: \(mirror)") }
        return "PlayRequest(\(parts.joined(separator: ", ")))"
    }

    /// Whether `code` is an ISO 639 language code as `audioLanguage` takes it: 2 or 3 ASCII letters.
    public static func isLanguageCode(_ code: String) -> Bool {
        (2...3).contains(code.utf8.count)
            && code.utf8.allSatisfy { (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
    }

    /// Why `url` may not be played (nil when it may): an http or https scheme, `://`, a host, printable ASCII
    /// only (a space or a line break would reach the HTTP request), no userinfo, at most `maximumURLLength` bytes.
    public static func problem(withURL url: String) -> String? {
        guard url.utf8.count <= maximumURLLength else { return "is longer than \(maximumURLLength) bytes" }
        guard url.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return "may hold only printable ASCII (percent-encode spaces and other characters)"
        }
        guard let colon = url.firstIndex(of: ":"), urlSchemes.contains(url[..<colon].lowercased()) else {
            return "must be an http or https URL"
        }
        let rest = url[colon...]
        guard rest.hasPrefix("://") else { return "must be an http or https URL (scheme://host/...)" }
        let authority = rest.dropFirst(3).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.isEmpty else { return "has no host" }
        guard !authority.contains("@") else { return "must not carry credentials: send them as username and password" }
        return nil
    }
}

/// Media the sender serves over a media connection (the receiver pulls it by byte ranges).
public struct MediaDescriptor: Codable, Sendable, Equatable {
    /// Total size in bytes; nil for a stream of unknown length (standard input, a pipe).
    public var size: Int64?
    /// Whether the receiver may read at any offset; false for standard input and pipes (reads must be in order).
    public var seekable: Bool
    /// A file name with its extension, which helps FFmpeg probe.
    public var nameHint: String?

    /// Creates a descriptor.
    public init(size: Int64?, seekable: Bool, nameHint: String?) {
        self.size = size
        self.seekable = seekable
        self.nameHint = nameHint
    }
}

/// A sidecar subtitle file (SRT, ASS/SSA, WebVTT …) the sender serves with the media.
public struct SubtitleFile: Codable, Sendable, Equatable {
    /// Its size in bytes, 1...`maximumSize`: the receiver reads it whole before playback starts.
    public var size: Int64
    /// Its file name with the extension, which helps FFmpeg tell the format.
    public var nameHint: String?

    /// The largest subtitle file: a film's SRT is about 100 KB, a karaoke-styled ASS a few MB.
    public static let maximumSize: Int64 = 8 << 20

    /// Creates a descriptor.
    public init(size: Int64, nameHint: String?) {
        self.size = size
        self.nameHint = nameHint
    }
}

/// Receiver → sender: the play request is accepted; open a media connection that presents `session`.
public struct PlayAccepted: Codable, Sendable, Equatable {
    /// A random token that ties the media connection to this playback session.
    public var session: String

    /// Creates the reply.
    public init(session: String) { self.session = session }
}

/// Sender → receiver: a playback control. JSON: `{"action":"pause"}`, `{"action":"seek","position":12.5,"exact":true}`,
/// `{"action":"volume","volume":0.5}`, `{"action":"mute","muted":true}`, `{"action":"rate","rate":1.5}`,
/// `{"action":"accessLog"}`.
/// `{"action":"scaling","mode":"aspectFill"}`, `{"action":"subtitles","language":"fra"}` (or `"off"`),
/// `{"action":"audio","language":"fra"}`.
public struct PlaybackControl: Codable, Sendable, Equatable {
    /// What to do.
    public enum Action: Sendable, Equatable {
        /// Pause (MPMoviePlaybackState.paused).
        case pause
        /// Resume after a pause.
        case resume
        /// Resume so that playback goes on at this instant of the receiver's CLOCK_MONOTONIC, in nanoseconds (wire:
        /// `resume` with `at`): how a group starts every member at once (docs/multiroom.md). An instant already
        /// past resumes at once; one more than `maximumScheduleAhead` ahead is taken as that far ahead.
        case resumeAt(Int64)
        /// Keeps a group's member in step (wire: `align` with `elapsed` and `at`): at instant `at` of the receiver's
        /// CLOCK_MONOTONIC (nanoseconds), `elapsed` seconds of the group's clock will have passed since the member's
        /// last scheduled resume (`resumeAt`). The receiver trims its clock's rate (at most ±0.1 %) so that its
        /// position follows the group's (docs/multiroom.md); ignored unless a scheduled resume started the playback.
        case align(elapsed: Double, at: Int64)
        /// Stop; the session finishes with `userExited`.
        case stop
        /// Seek to a position in seconds: `exact` shows the frame at that time (decoding forward
        /// from the key frame), otherwise the nearest preceding key frame (the seeds' two time options).
        case seek(position: Double, exact: Bool)
        /// Volume 0...1 (the receiver's output level; it outlives the session, like a TV's).
        case volume(Double)
        /// Mute or unmute.
        case mute(Bool)
        /// Playback rate 0.5...2.0, pitch kept.
        case rate(Double)
        /// Asks for the session's access log entry now: the receiver answers with an `accessLog` event.
        case accessLog
        /// How the receiver's window fits pictures (MPMovieScalingMode). Like the volume, it belongs to the
        /// receiver: it holds with nothing playing and carries over to the next session.
        case scaling(VideoScalingMode)
        /// Shows the subtitle track in this language (ISO 639, as `PlayRequest.subtitleLanguage`), or none for
        /// "off", from now on, while playing.
        case subtitles(String)
        /// Plays the audio track in this language (ISO 639) from now on, while playing.
        case audio(String)
        /// Asks the sender that plays here, when it plays a group, to add the receiver it knows by this name (wire:
        /// `join` with `receiver`, at most `PlaybackControl.maximumReceiverName` bytes): castd passes it on to that
        /// sender as a `joinRequest` event (`cast join kitchen --to "living room"`, docs/multiroom.md).
        case join(receiver: String)
        /// Asks the sender that plays here, when it plays a queue, to move through it (wire: `skip` with `direction`,
        /// `next` or `previous`): castd passes it on to that sender as a `skipRequest` event (`cast next kitchen`).
        case skip(QueueMove)

        /// The wire word.
        public var word: String {
            switch self {
            case .pause: "pause"
            case .resume, .resumeAt: "resume"
            case .align: "align"
            case .stop: "stop"
            case .seek: "seek"
            case .volume: "volume"
            case .mute: "mute"
            case .rate: "rate"
            case .accessLog: "accessLog"
            case .scaling: "scaling"
            case .subtitles: "subtitles"
            case .audio: "audio"
            case .join: "join"
            case .skip: "skip"
            }
        }
    }
    /// What to do.
    public var action: Action

    /// Creates a control.
    public init(_ action: Action) { self.action = action }

    /// The longest receiver name a `join` carries (bytes).
    public static let maximumReceiverName = 256

    /// The furthest ahead a scheduled action (`resumeAt`) is carried out: 10 s (nanoseconds).
    public static let maximumScheduleAhead: Int64 = 10_000_000_000
    /// The positions (and an `align`'s elapsed time) a control may carry: 0 to 10⁷ s (nearly four months).
    public static let positions: ClosedRange<Double> = 0...1e7
    /// The rates a control may carry: half to twice the normal speed.
    public static let rates: ClosedRange<Double> = 0.5...2

    private enum Key: String, CodingKey {
        case action, position, exact, volume, muted, rate, mode, language, at, elapsed, receiver, direction
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(action.word, forKey: .action)
        switch action {
        case .pause, .resume, .stop, .accessLog: break
        case .resumeAt(let instant): try c.encode(instant, forKey: .at)
        case .align(let elapsed, let instant):
            try c.encode(elapsed, forKey: .elapsed)
            try c.encode(instant, forKey: .at)
        case .seek(let position, let exact):
            try c.encode(position, forKey: .position)
            try c.encode(exact, forKey: .exact)
        case .volume(let volume): try c.encode(volume, forKey: .volume)
        case .mute(let muted): try c.encode(muted, forKey: .muted)
        case .rate(let rate): try c.encode(rate, forKey: .rate)
        case .scaling(let mode): try c.encode(mode.rawValue, forKey: .mode)
        case .subtitles(let language), .audio(let language): try c.encode(language, forKey: .language)
        case .join(let receiver): try c.encode(receiver, forKey: .receiver)
        case .skip(let move): try c.encode(move, forKey: .direction)
        }
    }

    /// Decodes and bounds the values: a position must be finite and 0...10⁷ s, a volume 0...1, a rate 0.5...2.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        func bounded(_ key: Key, _ range: ClosedRange<Double>) throws -> Double {
            let value = try c.decode(Double.self, forKey: key)
            guard value.isFinite, range.contains(value) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "outside \(range)")
            }
            return value
        }
        switch try c.decode(String.self, forKey: .action) {
        case "pause": action = .pause
        case "resume":
            if let instant = try c.decodeIfPresent(Int64.self, forKey: .at) {
                guard instant >= 0 else {
                    throw DecodingError.dataCorruptedError(forKey: .at, in: c, debugDescription: "a negative instant")
                }
                action = .resumeAt(instant)
            } else {
                action = .resume
            }
        case "align":
            let instant = try c.decode(Int64.self, forKey: .at)
            guard instant >= 0 else {
                throw DecodingError.dataCorruptedError(forKey: .at, in: c, debugDescription: "a negative instant")
            }
            action = .align(elapsed: try bounded(.elapsed, Self.positions), at: instant)
        case "stop": action = .stop
        case "accessLog": action = .accessLog
        case "seek":
            action = .seek(
                position: try bounded(.position, Self.positions),
                exact: try c.decodeIfPresent(Bool.self, forKey: .exact) ?? true)
        case "volume": action = .volume(try bounded(.volume, 0...1))
        case "mute": action = .mute(try c.decode(Bool.self, forKey: .muted))
        case "rate": action = .rate(try bounded(.rate, Self.rates))
        case "scaling":
            let word = try c.decode(String.self, forKey: .mode)
            guard let mode = VideoScalingMode(rawValue: word) else {
                throw DecodingError.dataCorruptedError(forKey: .mode, in: c, debugDescription: "unknown mode")
            }
            action = .scaling(mode)
        case "subtitles":
            let language = try c.decode(String.self, forKey: .language)
            guard language == "off" || PlayRequest.isLanguageCode(language) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .language, in: c,
                    debugDescription: "subtitles.language must be ISO 639 (2 or 3 letters) or off")
            }
            action = .subtitles(language)
        case "audio":
            let language = try c.decode(String.self, forKey: .language)
            guard PlayRequest.isLanguageCode(language) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .language, in: c, debugDescription: "audio.language must be ISO 639 (2 or 3 letters)")
            }
            action = .audio(language)
        case "join":
            let receiver = try c.decode(String.self, forKey: .receiver)
            guard Self.isReceiverName(receiver) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .receiver, in: c,
                    debugDescription: "join.receiver must be 1...\(Self.maximumReceiverName) bytes of printable text")
            }
            action = .join(receiver: receiver)
        case "skip": action = .skip(try c.decode(QueueMove.self, forKey: .direction))
        case let other:
            throw DecodingError.dataCorruptedError(
                forKey: .action, in: c, debugDescription: "unknown action '\(other)'")
        }
    }
}

extension PlaybackControl {
    /// A name a `join` (and a `joinRequest`) may carry: 1...`maximumReceiverName` bytes, printable (what `printable`
    /// leaves as it is).
    public static func isReceiverName(_ name: String) -> Bool {
        (1...maximumReceiverName).contains(name.utf8.count) && printable(name) == name
    }
}

/// How a receiver's window fits pictures whose shape differs from the screen's (the seeds' MPMovieScalingMode); the
/// wire words are the raw values.
public enum VideoScalingMode: String, Codable, Sendable, CaseIterable {
    /// Natural size, centred, cropped where larger than the screen.
    case none
    /// As large as fits whole; black bars (the default).
    case aspectFit
    /// As small as covers the screen; the overflow is cropped.
    case aspectFill
    /// Stretched to the screen's shape.
    case fill
}

/// Sender → receiver, the first message on a media connection: which session it serves.
public struct MediaHello: Codable, Sendable, Equatable {
    /// The protocol version.
    public var version: Int
    /// The token from `PlayAccepted`.
    public var session: String

    /// Creates the hello.
    public init(version: Int = protocolVersion, session: String) {
        self.version = version
        self.session = session
    }
}

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

/// Sender → receiver on a media connection: bytes of the media. Binary on the wire (not JSON):
/// 8 bytes big-endian offset, then the bytes. No bytes means the end of the media at `offset`.
public struct MediaData: Sendable, Equatable {
    /// Where the bytes start.
    public var offset: Int64
    /// The bytes.
    public var bytes: [UInt8]

    /// Creates a data message.
    public init(offset: Int64, bytes: [UInt8]) {
        self.offset = offset
        self.bytes = bytes
    }

    /// The largest frame body on a media connection: a maximal read plus the type byte and the offset.
    public static let maximumFrameLength = MediaRead.maximumLength + 1 + 8
}
