/// One stream's frames placed on the playback clock's timeline, with timestamp discontinuities taken out.
///
/// A frame is due at its timestamp plus an offset, which stays 0 for a well-formed stream. A timestamp more than
/// `maxJump` (10 s in MPEG-TS and FLV, an hour elsewhere, as ffplay) away from where the stream stood, forward or backward, is a discontinuity (a spliced or damaged
/// file, an MPEG-TS clock that was reset): instead of waiting for it (days, for some damaged files) or rushing
/// through what follows, the offset moves so that the frame follows the previous one after that frame's duration,
/// as if the timestamps had run on. Where the stream stood is the previous frame's timestamp or, for a segment's
/// first frame, the clock's anchor, so a stream that begins more than `maxJump` away from the others starts with
/// them. This is ffplay's `max_frame_duration` (beyond it, ffplay neither trusts a frame's duration nor syncs video
/// to the audio clock) and mpv's "Invalid video timestamp" reset. A frame's duration of more than `maxJump` is not
/// believed either: the last plausible interval between frames stands in for it, or 1/25 s (mpv's guess when it
/// knows nothing better).
///
/// A value: no I/O, no clock; the video output asks it for each frame's due time and length.
struct PresentationTimeline: Sendable {
    /// The largest jump between consecutive timestamps, in seconds, that is taken as it is, in a format whose
    /// timestamps may be discontinuous (MPEG-TS, FLV).
    static let maxJump = 10.0
    /// The same in other formats (MP4, Matroska, …), where a long gap is more likely a long picture than a reset.
    static let maxJumpContinuous = 3600.0
    /// A frame's duration when nothing plausible is known.
    static let fallbackDuration = 1.0 / 25

    /// Where a frame goes on the clock's timeline.
    struct Placement: Sendable, Equatable {
        /// The media time at which the frame is due.
        var time: Double
        /// How long it stays on screen (0: unknown).
        var duration: Double
    }

    let maxJump: Double
    /// Added to every timestamp: 0 until the first discontinuity.
    private(set) var offset = 0.0
    /// How many discontinuities were taken out so far.
    private(set) var discontinuities = 0
    /// The clock's anchor for the segment's first frame.
    private var anchor: Double?
    /// The previous frame: its timestamp (nil: it had none) and where it went.
    private var previous: (stamp: Double, placement: Placement)?
    /// The last interval between consecutive timestamps that was plausible (more than 0, at most `maxJump`).
    private var lastInterval: Double?

    init(maxJump: Double = PresentationTimeline.maxJump) { self.maxJump = maxJump }

    /// A segment (the start, or a seek) whose clock starts at media time `anchor`: what came before does not count.
    mutating func begin(at anchor: Double) {
        self.anchor = anchor
        offset = 0
        previous = nil
    }

    /// Places the next frame, with its timestamp in seconds (nil: none, it follows the previous frame) and the
    /// duration its packet or the frame rate gives (0: unknown).
    mutating func place(stamp: Double?, duration: Double) -> Placement {
        let length = plausible(duration)
        guard let stamp else {
            let time = previous.map { $0.placement.time + $0.placement.duration } ?? anchor ?? 0
            previous = (time - offset, Placement(time: time, duration: length))
            return Placement(time: time, duration: length)
        }
        if let previous {
            let jump = stamp - previous.stamp
            if abs(jump) > maxJump {
                let step = previous.placement.duration > 0 ? previous.placement.duration : interval
                offset = previous.placement.time + step - stamp
                discontinuities += 1
            } else if jump > 0 {
                lastInterval = jump
            }
        } else if let anchor, abs(stamp - anchor) > maxJump {
            offset = anchor - stamp
            discontinuities += 1
        }
        let placement = Placement(time: stamp + offset, duration: length)
        previous = (stamp, placement)
        return placement
    }

    /// The interval to assume between frames: the last plausible one, or 1/25 s.
    private var interval: Double { lastInterval ?? Self.fallbackDuration }

    /// `duration`, unless it is longer than `maxJump`.
    private func plausible(_ duration: Double) -> Double {
        duration > maxJump ? interval : max(duration, 0)
    }
}
