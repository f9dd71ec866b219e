import FoundationEssentials

/// Events travel as JSON objects with an `event` key naming the kind, e.g.
/// `{"event":"playbackState","state":"playing"}`. The same objects are what `castd --events` and
/// `cast send --json` print, one per line (docs/protocol.md lists every field).
extension PlaybackEvent: Codable {
    private enum Key: String, CodingKey {
        case event, loadState, duration, mediaTypes, width, height, state, position, at, active, reason, error, volume,
            muted, rate, playableDuration, ahead, accessLog, errorLog, code, tracks, offset, trim, limited, receiver,
            direction, linkRate, wait
    }

    /// The `event` word of each kind.
    public var name: String {
        switch self {
        case .loadState: "loadState"
        case .durationAvailable: "durationAvailable"
        case .mediaTypes: "mediaTypes"
        case .naturalSize: "naturalSize"
        case .readyForDisplay: "readyForDisplay"
        case .playbackState: "playbackState"
        case .position: "position"
        case .videoActive: "videoActive"
        case .volume: "volume"
        case .rate: "rate"
        case .buffered: "buffered"
        case .accessLog: "accessLog"
        case .errorLog: "errorLog"
        case .metadata: "metadata"
        case .tracks: "tracks"
        case .sync: "sync"
        case .scheduledStart: "scheduledStart"
        case .joinRequest: "joinRequest"
        case .skipRequest: "skipRequest"
        case .moveRequest: "moveRequest"
        case .finished: "finished"
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(name, forKey: .event)
        switch self {
        case .loadState(let state): try c.encode(state.wordList, forKey: .loadState)
        case .durationAvailable(let duration): try c.encode(duration, forKey: .duration)
        case .mediaTypes(let types): try c.encode(types, forKey: .mediaTypes)
        case .naturalSize(let width, let height):
            try c.encode(width, forKey: .width)
            try c.encode(height, forKey: .height)
        case .readyForDisplay: break
        case .playbackState(let state): try c.encode(state, forKey: .state)
        case .position(let seconds, let at):
            try c.encode(seconds, forKey: .position)
            try c.encode(at, forKey: .at)
        case .videoActive(let active): try c.encode(active, forKey: .active)
        case .volume(let volume, let muted):
            try c.encode(volume, forKey: .volume)
            try c.encode(muted, forKey: .muted)
        case .rate(let rate): try c.encode(rate, forKey: .rate)
        case .buffered(let playable, let ahead, let linkRate, let wait):
            try c.encode(playable, forKey: .playableDuration)
            try c.encode(ahead, forKey: .ahead)
            try c.encodeIfPresent(linkRate, forKey: .linkRate)
            try c.encodeIfPresent(wait, forKey: .wait)
        case .accessLog(let entry): try c.encode(entry, forKey: .accessLog)
        case .errorLog(let entry): try c.encode(entry, forKey: .errorLog)
        // Flat: `metadata` (the items) and `artwork` sit beside `event`.
        case .metadata(let metadata): try metadata.encode(to: encoder)
        case .tracks(let tracks): try c.encode(tracks, forKey: .tracks)
        case .sync(let offset, let trim, let limited):
            try c.encode(offset, forKey: .offset)
            try c.encode(trim, forKey: .trim)
            if limited { try c.encode(true, forKey: .limited) }
        case .scheduledStart(let at, let position):
            try c.encode(at, forKey: .at)
            try c.encode(position, forKey: .position)
        case .joinRequest(let receiver), .moveRequest(let receiver): try c.encode(receiver, forKey: .receiver)
        case .skipRequest(let move): try c.encode(move, forKey: .direction)
        case .finished(let reason, let error, let code):
            try c.encode(reason, forKey: .reason)
            try c.encodeIfPresent(error, forKey: .error)
            try c.encodeIfPresent(code, forKey: .code)
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        let name = try c.decode(String.self, forKey: .event)
        func finite(_ key: Key) throws -> Double {
            let value = try c.decode(Double.self, forKey: key)
            guard value.isFinite else {
                throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "not finite")
            }
            return value
        }
        switch name {
        case "loadState":
            let words = try c.decode([String].self, forKey: .loadState)
            guard let state = LoadState(words: words) else {
                throw DecodingError.dataCorruptedError(forKey: .loadState, in: c, debugDescription: "unknown word")
            }
            self = .loadState(state)
        case "durationAvailable": self = .durationAvailable(try finite(.duration))
        case "mediaTypes": self = .mediaTypes(try c.decode([MediaType].self, forKey: .mediaTypes))
        case "naturalSize":
            self = .naturalSize(
                width: try c.decode(Int.self, forKey: .width), height: try c.decode(Int.self, forKey: .height))
        case "readyForDisplay": self = .readyForDisplay
        case "playbackState": self = .playbackState(try c.decode(PlaybackState.self, forKey: .state))
        case "position": self = .position(seconds: try finite(.position), at: try finite(.at))
        case "videoActive": self = .videoActive(try c.decode(Bool.self, forKey: .active))
        case "volume": self = .volume(try finite(.volume), muted: try c.decode(Bool.self, forKey: .muted))
        case "rate": self = .rate(try finite(.rate))
        case "buffered":
            let (playable, ahead) = (try finite(.playableDuration), try finite(.ahead))
            let linkRate = try c.contains(.linkRate) ? finite(.linkRate) : nil
            let wait = try c.contains(.wait) ? finite(.wait) : nil
            guard playable >= 0, ahead >= 0, (linkRate ?? 0) >= 0, (wait ?? 0) >= 0 else {
                throw DecodingError.dataCorruptedError(forKey: .ahead, in: c, debugDescription: "negative")
            }
            self = .buffered(playableDuration: playable, ahead: ahead, linkRate: linkRate, wait: wait)
        case "accessLog": self = .accessLog(try c.decode(AccessLogEntry.self, forKey: .accessLog))
        case "errorLog": self = .errorLog(try c.decode(ErrorLogEntry.self, forKey: .errorLog))
        case "metadata": self = .metadata(try TimedMetadata(from: decoder))
        case "tracks":
            let tracks = try c.decode([MediaTrack].self, forKey: .tracks)
            guard tracks.count <= MediaTrack.maximumCount,
                tracks.allSatisfy({ track in
                    [track.codec, track.language ?? "", track.title ?? ""]
                        .allSatisfy { $0.utf8.count <= maximumTextLength }
                })
            else {
                throw DecodingError.dataCorruptedError(
                    forKey: .tracks, in: c, debugDescription: "at most \(MediaTrack.maximumCount) tracks, short texts")
            }
            self = .tracks(tracks)
        case "sync":
            let (offset, trim) = (try finite(.offset), try finite(.trim))
            // Within what a member may do: jump beyond 50 ms, trim at most 1000 ppm.
            guard abs(offset) <= Self.maximumSyncOffset, abs(trim) <= Self.maximumSyncTrim else {
                throw DecodingError.dataCorruptedError(forKey: .trim, in: c, debugDescription: "out of range")
            }
            let limited = try c.decodeIfPresent(Bool.self, forKey: .limited) ?? false
            self = .sync(offset: offset, trim: trim, limited: limited)
        case "scheduledStart":
            let at = try c.decode(Int64.self, forKey: .at)
            guard at >= 0 else {
                throw DecodingError.dataCorruptedError(forKey: .at, in: c, debugDescription: "negative instant")
            }
            self = .scheduledStart(at: at, position: try finite(.position))
        case let word where word == "joinRequest" || word == "moveRequest":
            let receiver = try c.decode(String.self, forKey: .receiver)
            guard PlaybackControl.isReceiverName(receiver) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .receiver, in: c, debugDescription: "not a receiver name")
            }
            self = word == "joinRequest" ? .joinRequest(receiver: receiver) : .moveRequest(receiver: receiver)
        case "skipRequest": self = .skipRequest(try c.decode(QueueMove.self, forKey: .direction))
        case "finished":
            // A code this version does not know is no code: the reason alone still says what happened.
            let code = try c.decodeIfPresent(String.self, forKey: .code).flatMap(FinishCode.init(rawValue:))
            self = .finished(
                reason: try c.decode(FinishReason.self, forKey: .reason),
                error: try c.decodeIfPresent(String.self, forKey: .error), code: code)
        default:
            throw DecodingError.dataCorruptedError(forKey: .event, in: c, debugDescription: "unknown event '\(name)'")
        }
    }

    /// The event as one line of JSON (no newline), keys sorted: the format of `castd --events` and `cast send --json`.
    public var jsonLine: String {
        String(decoding: JSONPayload.encode(self), as: UTF8.self)
    }
}

extension PlaybackEvent {
    /// The largest offset a `sync` event carries (seconds): a member jumps beyond 50 ms, so anything near this is a
    /// broken clock, yet still a value to show rather than a reason to stop.
    public static let maximumSyncOffset = 1e7
    /// The largest trim a `sync` event carries (ppm): a member trims its rate by at most 0.1 %.
    public static let maximumSyncTrim = 1000.0

    /// A `sync` event whose values the wire accepts, whatever arithmetic made them: each is clamped to its limit
    /// (`(0.999 − 1) × 10⁶` is −1000.0000000000009), a value that is not a number is 0, and an event whose values
    /// had to be changed says it is `limited`.
    public static func sync(clampingOffset offset: Double, trim: Double, limited: Bool) -> PlaybackEvent {
        func clamp(_ value: Double, _ limit: Double) -> Double {
            value.isNaN ? 0 : min(max(value, -limit), limit)
        }
        let (safeOffset, safeTrim) = (clamp(offset, maximumSyncOffset), clamp(trim, maximumSyncTrim))
        // Beyond the limit by more than rounding: the correction itself was out of range.
        let beyond = !(abs(offset) <= maximumSyncOffset) || !(abs(trim) <= maximumSyncTrim + 1e-6)
        return .sync(offset: safeOffset, trim: safeTrim, limited: limited || beyond)
    }
}
