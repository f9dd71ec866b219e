/// When a window drops a video frame instead of presenting it: ffplay's rule in `video_refresh`. A frame whose turn
/// comes so late that the next frame is already due, and is already decoded and waiting, is not presented (and is
/// counted, `Player.droppedVideoFrames`), so that a video that cannot be shown in real time keeps pace with the
/// clock instead of falling ever further behind. When the next frame is not there yet, the late one is shown: a
/// pipeline slower than real time (HDR tone mapping on a small box) shows what it can instead of dropping every
/// frame. Never the first frame of a segment (after a seek the picture must change), never a frame of unknown
/// duration, and never while the clock stands (nothing is due then).
///
/// A value rule: the video output asks it with the monotonic time now, the time the next frame is due and whether
/// that frame is at hand.
enum LateFrameRule {
    /// Whether to drop a frame of `duration` seconds whose successor is due at `nextDue` (monotonic nanoseconds,
    /// nil while the clock stands), at monotonic time `now`; `nextAtHand`: the successor is decoded and waiting.
    static func drops(firstOfSegment: Bool, duration: Double, nextDue: UInt64?, now: UInt64, nextAtHand: Bool = true)
        -> Bool
    {
        guard !firstOfSegment, duration > 0, nextAtHand, let nextDue else { return false }
        return now > nextDue
    }
}
