/// What the AirPlay client is told about its playback (`/playback-info`, `/scrub`): a snapshot the receiver
/// takes of the session, turned into the bodies Apple TVs answer with.
///
/// pyatv 0.18.0 (`pyatv/protocols/airplay/player.py`, `_wait_for_media_to_end`) polls `/playback-info` once a
/// second after `/play`: a body with `duration` means "playing"; once playing, the first body without
/// `duration` means "finished"; an `error` dictionary (`code`, `domain`) raises a playback error. So
/// ``idle`` (nothing plays, or it ended) and ``loading`` omit `duration`.
public enum AirPlayPlayback: Sendable, Equatable {
    /// Nothing plays, or what played ended or was stopped.
    case idle
    /// Accepted; the engine is opening the URL.
    case loading
    /// Playing (rate > 0) or paused (rate 0). `duration` is 0 while unknown (a live stream);
    /// `stalled` when the input cannot keep up.
    case active(duration: Double, position: Double, rate: Double, stalled: Bool)
    /// It failed (or another sender took over); the message says why.
    case failed(String)

    /// The error domain castd reports failures under.
    public static let errorDomain = "castd"

    /// What an AirPlay client is told of any failure. AirPlay clients are strangers: FFmpeg's own text ("Connection
    /// refused", "Server returned 404", a timeout) would make castd a port scanner of what it can reach.
    public static let failureMessage = "the media could not be played"

    /// The `/playback-info` body as a binary property list.
    public func playbackInfoBody() -> [UInt8] {
        PropertyList.binary(playbackInfo)
    }

    /// The `/playback-info` dictionary.
    var playbackInfo: [String: Any] {
        switch self {
        case .idle, .loading:
            let loading = self == .loading
            return [
                "position": 0.0, "rate": 0.0, "readyToPlay": false, "playbackBufferEmpty": true,
                "playbackBufferFull": false, "playbackLikelyToKeepUp": !loading, "loadedTimeRanges": [Any](),
                "seekableTimeRanges": [Any](),
            ]
        case .active(let duration, let position, let rate, let stalled):
            let range: [[String: Any]] = [["start": 0.0, "duration": duration]]
            return [
                "duration": duration, "position": position, "rate": rate, "readyToPlay": true,
                "playbackBufferEmpty": stalled, "playbackBufferFull": !stalled, "playbackLikelyToKeepUp": !stalled,
                "loadedTimeRanges": range, "seekableTimeRanges": range,
            ]
        case .failed(let message):
            return [
                "position": 0.0, "rate": 0.0, "readyToPlay": false, "playbackBufferEmpty": true,
                "playbackBufferFull": false, "playbackLikelyToKeepUp": false, "loadedTimeRanges": [Any](),
                "seekableTimeRanges": [Any](),
                "error": ["code": -1, "domain": Self.errorDomain, "localizedDescription": message] as [String: Any],
            ]
        }
    }

    /// The `GET /scrub` body: `duration: D` and `position: P` lines, six decimals as Apple TVs write them.
    public var scrubText: String {
        var duration = 0.0
        var position = 0.0
        if case .active(let d, let p, _, _) = self { (duration, position) = (d, p) }
        return "duration: \(Self.sixDecimals(duration))\nposition: \(Self.sixDecimals(position))"
    }

    /// `value` with six decimals, without Foundation's `String(format:)`.
    static func sixDecimals(_ value: Double) -> String {
        guard value.isFinite, value >= 0, value < 1e12 else { return "0.000000" }
        let micros = (value * 1_000_000).rounded()
        let whole = Int(micros / 1_000_000)
        let fraction = Int(micros) - whole * 1_000_000
        let digits = String(fraction)
        return "\(whole)." + String(repeating: "0", count: 6 - digits.count) + digits
    }
}
