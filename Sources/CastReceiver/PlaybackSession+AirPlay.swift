import CastAirPlay
import CastProtocol

extension PlaybackSession {
    /// What an AirPlay client is told about this session (`/playback-info`, `/scrub`).
    ///
    /// Ended or stopped → idle (no duration: pyatv's "finished"); failed, or taken over by another sender →
    /// failed, with one message for every failure (``AirPlayPlayback/failureMessage``: the details are for the log
    /// and paired senders, not strangers); not yet playing → loading; otherwise active, rate 0 when paused.
    func airPlayPlayback() -> AirPlayPlayback {
        let now = snapshot()
        if let finish = now.finish {
            if finish.reason == .playbackError { return .failed(AirPlayPlayback.failureMessage) }
            return .idle
        }
        switch now.playbackState {
        case .stopped:
            return .loading
        case .playing, .paused, .interrupted, .seekingForward, .seekingBackward:
            let duration = now.duration ?? 0
            var position = max(0, now.position ?? 0)
            if duration > 0 { position = min(position, duration) }
            let rate = now.playbackState == .playing ? now.rate : 0
            return .active(
                duration: duration, position: position, rate: rate,
                stalled: now.loadState.contains(.stalled) || now.playbackState == .interrupted)
        }
    }
}
