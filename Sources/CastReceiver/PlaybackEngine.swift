import CastMedia
import CastProtocol

/// What a session drives: the engine inside castd (`Player`) or in a worker process (`DecoderProcess`). The same
/// calls as `Player`'s; the engine's events reach the session through the closure it was made with.
///
/// Thread-safety: every method may be called from any thread.
protocol PlaybackEngine: AnyObject, Sendable {
    func start()
    func pause()
    func resume()
    func seek(to seconds: Double, exact: Bool)
    func setVolume(_ volume: Double)
    func setMuted(_ muted: Bool)
    func setRate(_ rate: Double)
    func setScalingMode(_ mode: ScalingMode)
    /// Shows the subtitle track in `language`, or none for "off" (`Player.selectSubtitles`).
    func selectSubtitles(_ language: String)
    /// Plays the audio track in `language` (`Player.selectAudio`).
    func selectAudio(_ language: String)
    func stop()
    /// The access log entry now, or nil when it arrives later as an `accessLog` event (a worker's).
    func requestAccessLog() -> AccessLogEntry?
}

extension Player: PlaybackEngine {
    func requestAccessLog() -> AccessLogEntry? { accessLog() }
}
