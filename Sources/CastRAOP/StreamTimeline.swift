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

    /// Starts the timeline again so that the speaker plays `frame` at `instant` (ns, our clock): a speaker plays a
    /// frame `latency` (ns) after the sync packets say it is now, so it is now that much earlier. How a group's
    /// scheduled start reaches a speaker: our clock is the one it keeps (we are its timing server).
    public mutating func reanchor(frame: Int64, heardAt instant: Int64, latency: Int64) {
        reanchor(frame: frame, at: instant - latency)
    }

    /// The sync packet for `now` (ns, our clock): the frame that is now, at our NTP time for `now`, and the frame
    /// `latencyFrames` before it as "the timestamp less latency", less the 11025 frames that shairport-sync (and an
    /// AirPort Express) adds back for the `0x0007` in the sync's header: the speaker plays frame n at
    /// `time + (n − timestamp + latencyFrames) / rate`.
    public func sync(at now: Int64, clock: SpeakerClock, latencyFrames: Int64, first: Bool) -> SpeakerPacket {
        let current = frame(at: now)
        return .sync(
            timestampLessLatency: timestamp(ofFrame: current - latencyFrames + Self.fixedLatencyFrames),
            time: clock.ntp(monotonicNanoseconds: now), timestamp: timestamp(ofFrame: current), first: first)
    }

    /// What a speaker adds to the latency a sync packet states (`0x0007` in its header): 0.25 s at 44.1 kHz.
    public static let fixedLatencyFrames: Int64 = 11_025
}
