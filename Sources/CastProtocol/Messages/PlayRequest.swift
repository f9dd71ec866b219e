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

extension PlayRequest: MessageBody {
    func check() throws(ProtocolError) {
        try checkText(title, field: "play.title")
        switch (media, url) {
        case (let media?, nil):
            try checkText(media.nameHint ?? "", field: "play.media.nameHint")
            if let size = media.size, size < 0 {
                throw ProtocolError(.malformedMessage, "play.media.size is negative")
            }
            if username != nil || password != nil {
                throw ProtocolError(.malformedMessage, "play.username and play.password go only with play.url")
            }
            if let subtitles = subtitles {
                try checkText(subtitles.nameHint ?? "", field: "play.subtitles.nameHint")
                guard (1...SubtitleFile.maximumSize).contains(subtitles.size) else {
                    throw ProtocolError(
                        .malformedMessage, "play.subtitles.size must be 1...\(SubtitleFile.maximumSize) bytes")
                }
            }
        case (nil, let url?):
            if let problem = PlayRequest.problem(withURL: url) {
                throw ProtocolError(.malformedMessage, "play.url \(problem)")
            }
            try checkText(username ?? "", field: "play.username")
            try checkText(password ?? "", field: "play.password")
            if username?.contains(":") == true {
                throw ProtocolError(.malformedMessage, "play.username must not contain ':'")
            }
            if password != nil && username == nil {
                throw ProtocolError(.malformedMessage, "play.password needs play.username")
            }
            if subtitles != nil {
                throw ProtocolError(.malformedMessage, "play.subtitles goes only with play.media")
            }
        default:
            throw ProtocolError(.malformedMessage, "play needs exactly one of media and url")
        }
        if mirror == true {
            guard let media = media, !media.seekable, media.size == nil, subtitles == nil else {
                throw ProtocolError(
                    .malformedMessage, "play.mirror goes only with a media stream (no size, not seekable)")
            }
        }
        if let start = startTime, !PlayRequest.startTimes.contains(start) {
            let most = Int(PlayRequest.startTimes.upperBound)
            throw ProtocolError(.malformedMessage, "play.startTime must be a number of seconds from 0 to \(most)")
        }
        if let language = audioLanguage, !PlayRequest.isLanguageCode(language) {
            throw ProtocolError(.malformedMessage, "play.audioLanguage must be 2 or 3 ASCII letters (ISO 639)")
        }
        if let group = group {
            guard (1...PlayRequest.maximumGroupSize).contains(group.count) else {
                throw ProtocolError(
                    .malformedMessage, "play.group must name 1...\(PlayRequest.maximumGroupSize) receivers")
            }
            for name in group { try checkText(name, field: "play.group") }
        }
        if let queue = queue, !queue.isValid {
            throw ProtocolError(
                .malformedMessage, "play.queue must be 1 ≤ number ≤ count ≤ \(QueuePlace.maximumCount)")
        }
        if let language = subtitleLanguage, language != "off", !PlayRequest.isLanguageCode(language) {
            throw ProtocolError(
                .malformedMessage, "play.subtitleLanguage must be 2 or 3 ASCII letters (ISO 639) or \"off\"")
        }
    }
}
