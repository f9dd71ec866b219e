/// The playback state of a receiver, in the vocabulary of MPMoviePlaybackState.
public enum PlaybackState: String, Codable, Sendable, CaseIterable {
    /// Nothing plays; the initial state and the state after a finish.
    case stopped
    /// Media is playing.
    case playing
    /// Paused by a control; resumes where it stopped.
    case paused
    /// Playback stopped for a reason outside the player (the input stalled, another sender took over, CastKit retries
    /// a lost receiver); castd's engine resumes a stalled input by itself, a CastKit player waits to be told.
    case interrupted
    /// Scrubbing forward.
    case seekingForward
    /// Scrubbing backward.
    case seekingBackward
}

/// How far loading has come, in the vocabulary of MPMovieLoadState. Encoded as a list of words.
public struct LoadState: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Enough is buffered to start playing.
    public static let playable = LoadState(rawValue: 1 << 0)
    /// Enough is buffered to play to the end at the measured input rate.
    public static let playthroughOK = LoadState(rawValue: 1 << 1)
    /// The input cannot keep up: playback is interrupted until the buffer refills.
    public static let stalled = LoadState(rawValue: 1 << 2)

    /// The wire words, in a fixed order.
    public static let words: [(LoadState, String)] = [
        (.playable, "playable"), (.playthroughOK, "playthroughOK"), (.stalled, "stalled"),
    ]

    /// The set as wire words.
    public var wordList: [String] { Self.words.filter { contains($0.0) }.map(\.1) }

    /// The set from wire words; nil when a word is unknown.
    public init?(words: [String]) {
        var state = LoadState()
        for word in words {
            guard let entry = Self.words.first(where: { $0.1 == word }) else { return nil }
            state.insert(entry.0)
        }
        self = state
    }
}

/// A load state travels as its list of words (`["playable","playthroughOK"]`); an unknown word does not decode.
extension LoadState: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        let words = try c.decode([String].self)
        guard words.count <= 8, let state = LoadState(words: words) else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "not a list of load state words")
        }
        self = state
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(wordList)
    }
}

/// Why playback finished, in the vocabulary of MPMovieFinishReason.
public enum FinishReason: String, Codable, Sendable {
    /// Played to the end.
    case playbackEnded
    /// Decoding, the source or the connection failed; the event carries the message.
    case playbackError
    /// A user stopped it.
    case userExited
}

/// What a machine can tell from a finish beyond its reason (`"code"` beside `"reason"` on the wire). The reason stays
/// one of MPMovieFinishReason's words, so a sender that does not know a code sees an ordinary `playbackError`; a
/// code a sender does not know decodes as none.
public enum FinishCode: String, Codable, Sendable {
    /// The receiver is shutting down (SIGTERM, SIGINT: `systemctl restart castd`, a reboot), not failing: the same
    /// receiver may be back in a moment, so a sender may retry it as after a lost connection.
    case receiverShutdown
}

/// The kinds of media a movie holds (MPMovieMediaTypeMask).
public enum MediaType: String, Codable, Sendable {
    /// At least one audio stream is played.
    case audio
    /// At least one video stream is played.
    case video
}

/// One change of playback, pushed by the receiver as it happens.
///
/// The same values leave the engine, cross the receiver and reach the sender: the engine
/// emits them, the receiver stamps and forwards them, `castd --events` and `cast send --json`
/// print them as JSON lines (see docs/protocol.md).
public enum PlaybackEvent: Sendable, Equatable {
    /// The load state changed.
    case loadState(LoadState)
    /// The duration became known (seconds).
    case durationAvailable(Double)
    /// The media types became known.
    case mediaTypes([MediaType])
    /// The natural size of the video became known (pixels, display aspect applied).
    case naturalSize(width: Int, height: Int)
    /// The first video frame is ready to be shown.
    case readyForDisplay
    /// The playback state changed.
    case playbackState(PlaybackState)
    /// The playback position (seconds) at a moment of the receiver's wall clock (seconds since 1970).
    case position(seconds: Double, at: Double)
    /// Video started or stopped being shown on the receiver (isAirPlayVideoActive).
    case videoActive(Bool)
    /// The receiver's output volume (0...1) or mute changed.
    case volume(Double, muted: Bool)
    /// The playback rate changed.
    case rate(Double)
    /// How much media is buffered (MPMoviePlayerController.playableDuration): `playableDuration` is the media time
    /// (seconds from the start) up to which media is buffered, `ahead` the seconds of it beyond the position.
    /// Pushed at most twice a second while it changes. `linkRate` is the input's rate as the receiver measures it
    /// (bits/s: the link for served media), and `wait`, while stalled, the seconds the receiver expects to wait
    /// before playing on; each absent when unknown (and from receivers that predate them).
    case buffered(playableDuration: Double, ahead: Double, linkRate: Double? = nil, wait: Double? = nil)
    /// The session's access log entry (MPMovieAccessLog): at the finish, and when a sender asks.
    case accessLog(AccessLogEntry)
    /// A failure, as an error log entry (MPMovieErrorLog), before the finish it causes.
    case errorLog(ErrorLogEntry)
    /// The media's tags and artwork presence, after probing and whenever they change (timed metadata).
    case metadata(TimedMetadata)
    /// The media's audio and subtitle tracks, which of them are selected: when the media opens, and again when the
    /// choice changes (`subtitles` control).
    case tracks([MediaTrack])
    /// A group member keeping in step (docs/multiroom.md), after each `align`: how far its position was from the
    /// group's timeline (seconds, positive ahead) and how much its clock's rate is trimmed now (parts per million);
    /// `limited` when the correction it wanted was out of range (held at the limit, or at the last good rate).
    case sync(offset: Double, trim: Double, limited: Bool = false)
    /// A scheduled resume (a group's start, `resume` with `at`) will start playback from media time `position`
    /// (seconds) at instant `at` of the receiver's CLOCK_MONOTONIC (nanoseconds): the instant the clock really starts
    /// at, after the receiver's own limits (at most 10 s ahead). Only for a resume whose instant is still ahead.
    case scheduledStart(at: Int64, position: Double)
    /// Someone asked the receiver to have the receiver of this name join the group it plays in (a `join` control
    /// passed on to the sender that plays there: only that sender gets it). A sender that plays a group adds it.
    case joinRequest(receiver: String)
    /// Someone asked the receiver to move through the queue that plays there (a `skip` control passed on to the sender
    /// that plays there: only that sender gets it). A sender that plays a queue moves (`cast next`, `cast previous`).
    case skipRequest(QueueMove)
    /// Someone asked the receiver to have what plays there move to the receiver of this name, at the position reached
    /// (a `move` control passed on to the sender that plays there: only that sender gets it). `cast send` starts it
    /// there and stops it here (`cast move`).
    case moveRequest(receiver: String)
    /// Playback finished; `error` is set for `playbackError`, `code` when a sender may act on why.
    case finished(reason: FinishReason, error: String?, code: FinishCode? = nil)
}
