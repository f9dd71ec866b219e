import CastMedia
import CastProtocol

/// Where a loaded movie plays: the engine on this machine or a receiver. A movie player holds one at a time and
/// replaces it to move playback.
///
/// Contract (the player calls these under its lock): no method blocks or reports synchronously; reports arrive in
/// order, on a thread of the playback's own.
protocol MoviePlayback: AnyObject, Sendable {
    /// The receiver it plays on; nil for local playback.
    var route: ReceiverDescription? { get }
    /// Opens the movie and plays it from the start time given at creation.
    func start()
    /// Pauses; playback stays where it is.
    func pause()
    /// Resumes after `pause()`.
    func resume()
    /// Ends playback; what it reports afterwards may be ignored.
    func stop()
    /// Seeks exactly to `seconds`.
    func seek(to seconds: Double)
    /// Sets the rate, 0.5...2.
    func setRate(_ rate: Double)
    /// Sets the output level, 0...1 (on a receiver: the receiver's level).
    func setVolume(_ volume: Double)
    /// Sets how pictures fit the screen (local windows; a receiver keeps its own).
    func setScalingMode(_ mode: ScalingMode)
    /// Shows the subtitle track in `language` (ISO 639), or none for "off", from now on.
    func selectSubtitles(_ language: String)
    /// Plays the audio track in `language` (ISO 639) from now on.
    func selectAudio(_ language: String)
}

/// What a playback reports to its player.
enum MoviePlaybackReport: Sendable {
    /// An event of the engine, local or on the receiver.
    case event(PlaybackEvent)
    /// The receiver could not be reached or refused the movie: playback must come back here.
    case routeLost(CastError)
    /// The connection to a receiver that was playing broke without a finish (castd killed or restarting, its host
    /// gone): the player may retry the same receiver, identified by `receiverID` (the key it presented), before it
    /// brings playback back here. nil when the route has no pinned key to insist on (an AirPlay speaker).
    case connectionBroken(CastError, receiverID: String?)
}
