import CastAirPlay
import CastProtocol
import Foundation

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
        switch now.state {
        case .stopped:
            return .loading
        case .playing, .paused, .interrupted, .seekingForward, .seekingBackward:
            let duration = now.duration ?? 0
            var position = max(0, now.position(now: Date().timeIntervalSince1970) ?? 0)
            if duration > 0 { position = min(position, duration) }
            let rate = now.state == .playing ? now.rate : 0
            return .active(
                duration: duration, position: position, rate: rate,
                stalled: now.isStalled || now.state == .interrupted)
        }
    }
}
