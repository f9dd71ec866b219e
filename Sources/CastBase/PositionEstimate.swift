/// Where playback stands now, from the last `position` event (media seconds, and the receiver's wall clock when they
/// were true): the position moves on by the time since then times the playback rate.
///
/// The caller passes rate 0 whenever the clock stands (paused, seeking, interrupted): then the position does not
/// move. A wall clock that stepped back does not move it back, and it never passes the duration when one is known.
public enum PositionEstimate {
    /// The position at wall-clock time `now` (seconds since 1970) of a report of `seconds` made at `at`, playing
    /// at `rate` media seconds per second since.
    public static func position(
        reported seconds: Double, at: Double, now: Double, rate: Double, duration: Double? = nil
    ) -> Double {
        let speed = rate.isFinite ? max(rate, 0) : 0
        var position = seconds + max(0, now - at) * speed
        if let duration, duration > 0 { position = min(position, max(duration, seconds)) }
        return position
    }
}
