/// When each frame of a speaker stream is due, on our monotonic clock: frame `anchorFrame` is "now" at
/// `anchorNanoseconds`, and the timeline advances at `rate` frames a second from there. Audio is sent `lead`
/// ahead of it (the speaker buffers about 2 s, so a little ahead is safe); sync packets tell the speaker which
/// frame is "now". A pause ends the timeline; resuming anchors it again at the frame that comes next.
///
/// RTP timestamps stay exact: the timestamp of frame n is `firstTimestamp + n` (mod 2³²), whatever the pacing.
///
/// Thread-safety: a value type; the streaming thread owns it.
public struct StreamTimeline: Sendable, Equatable {
    /// Frames a second.
    public let rate: Int
    /// The RTP timestamp of frame 0.
    public let firstTimestamp: UInt32
    /// The monotonic time (ns) at which `anchorFrame` is now.
    public private(set) var anchorNanoseconds: Int64
    /// The frame (counted from the stream's start) that is now at `anchorNanoseconds`.
    public private(set) var anchorFrame: Int64

    /// A timeline whose frame 0 is now at `nanoseconds`.
    public init(rate: Int, firstTimestamp: UInt32, startingAt nanoseconds: Int64) {
        precondition(rate > 0)
        self.rate = rate
        self.firstTimestamp = firstTimestamp
        anchorNanoseconds = nanoseconds
        anchorFrame = 0
    }

    /// The RTP timestamp of `frame`.
    public func timestamp(ofFrame frame: Int64) -> UInt32 {
        firstTimestamp &+ UInt32(truncatingIfNeeded: frame)
    }

    /// The monotonic time (ns) at which `frame` is now.
    public func time(ofFrame frame: Int64) -> Int64 {
        anchorNanoseconds + (frame - anchorFrame) * 1_000_000_000 / Int64(rate)
    }

    /// The frame that is now at monotonic time `nanoseconds` (rounded down; may be before `anchorFrame`).
    public func frame(at nanoseconds: Int64) -> Int64 {
        let elapsed = nanoseconds - anchorNanoseconds
        let frames = elapsed * Int64(rate)
        // Rounded toward minus infinity, so that the frame is never ahead of the clock.
        let whole = frames >= 0 ? frames / 1_000_000_000 : -((-frames + 999_999_999) / 1_000_000_000)
        return anchorFrame + whole
    }

    /// Starts the timeline again (after a pause): `frame` is now at `nanoseconds`.
    public mutating func reanchor(frame: Int64, at nanoseconds: Int64) {
        anchorFrame = frame
        anchorNanoseconds = nanoseconds
    }
}
