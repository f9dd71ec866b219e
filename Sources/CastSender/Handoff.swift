import CastBase
import CastProtocol

/// The rules of `cast move NAME --to OTHER` (a `moveRequest`, docs/multiroom.md) as pure functions: which receiver a
/// request may name, and where on the media the other receiver starts.
///
/// Thread-safety: stateless.
public enum Handoff {
    /// How far past the last reported position the move may reckon (seconds): positions come about every second, so
    /// an older one (a stalled reader, a wall clock that jumped) is taken as it is.
    public static let maximumReckoning = 5.0

    /// Why a `moveRequest` for `receiver` is refused, nil when it may be followed: a request comes from the wire, so
    /// it may name a receiver the sender finds or has paired (a name or an id), never an address to connect to.
    public static func refusal(of receiver: String) -> String? {
        guard PlaybackControl.isReceiverName(receiver) else { return "not a receiver name" }
        if case .address = ReceiverQuery(receiver) { return "an address from the wire is not followed" }
        return nil
    }

    /// Where the media is at wall-clock `now` (seconds since 1970): the last position reported, `seconds` at `at`,
    /// moved on by the time since when it plays (at most `maximumReckoning`; a time going back counts as none).
    public static func position(seconds: Double, at: Double, playing: Bool, rate: Double = 1, now: Double) -> Double {
        guard playing, at.isFinite, now.isFinite, rate.isFinite else { return max(0, seconds) }
        let elapsed = min(max(0, now - at), maximumReckoning)
        return max(0, seconds + elapsed * rate)
    }
}
