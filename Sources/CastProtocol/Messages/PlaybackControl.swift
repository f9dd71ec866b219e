import CastBase

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
        /// Asks a receiver that plays (alone) where its playback is anchored (wire: `anchor`, no field): it answers
        /// with the event `scheduledStart` (an instant of its CLOCK_MONOTONIC and the media position it presents then,
        /// at its rate), and from then on counts its `align`s from that instant, as if a scheduled resume had started
        /// it there: how a receiver that plays alone becomes a group without stopping (docs/multiroom.md). Only a
        /// receiver that advertises `Features.anchor` knows it; one that does not play, or stands (paused, seeking,
        /// stalled), answers nothing.
        case anchor
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
        /// Asks the sender that plays here to move what plays to the receiver it knows by this name, at the position
        /// reached (wire: `move` with `receiver`, bounded as `join`'s): castd passes it on to that sender as a
        /// `moveRequest` event (`cast move kitchen --to "living room"`, docs/multiroom.md).
        case move(receiver: String)

        /// The wire word.
        public var word: String {
            switch self {
            case .pause: "pause"
            case .resume, .resumeAt: "resume"
            case .align: "align"
            case .anchor: "anchor"
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
            case .move: "move"
            }
        }
    }
    /// What to do.
    public var action: Action

    /// Creates a control.
    public init(_ action: Action) { self.action = action }

    /// The longest receiver name a `join` (or a `move`) carries (bytes).
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
        case .pause, .resume, .stop, .accessLog, .anchor: break
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
        case .join(let receiver), .move(let receiver): try c.encode(receiver, forKey: .receiver)
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
        case "anchor": action = .anchor
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
        case let word where word == "join" || word == "move":
            let receiver = try c.decode(String.self, forKey: .receiver)
            guard Self.isReceiverName(receiver) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .receiver, in: c,
                    debugDescription: "\(word).receiver must be 1...\(Self.maximumReceiverName) bytes of printable text"
                )
            }
            action = word == "join" ? .join(receiver: receiver) : .move(receiver: receiver)
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
