/// How fast `cast mirror` encodes: follows how fast frames leave, so that no queue grows. A pure rule with time as an
/// input (microseconds); the helper asks it before each picture.
///
/// The queue it watches is the bytes written and not yet taken by `cast` (which takes them only as the receiver asks
/// for more, one read in flight): more than about one frame's worth waiting means the link is slower than the encoder.
/// Then the picture is skipped (a later one carries the change; the receiver shows the last one meanwhile) and the
/// rate drops by a fifth, at most every 100 ms; after a second with nothing waiting it rises by a tenth, up to the
/// maximum. On a slow link the picture gets softer, never later.
public struct MirrorRate: Sendable, Equatable {
    /// The bit rate now, bits per second.
    public private(set) var bitRate: Int
    /// The most and the least it goes to.
    public let maximum: Int
    public let minimum: Int
    private let fps: Int
    private var lastDrop: UInt64 = 0
    private var clearSince: UInt64?

    /// What to do with the picture at hand.
    public enum Decision: Sendable, Equatable {
        /// Encode it.
        case encode
        /// Skip it: the queue holds more than a frame.
        case skip
    }

    /// Starts at `start` (clamped) between `minimum` and `maximum` bits per second, for `fps` pictures a second.
    public init(start: Int, minimum: Int, maximum: Int, fps: Int) {
        self.maximum = max(maximum, minimum)
        self.minimum = minimum
        self.fps = max(fps, 1)
        self.bitRate = min(max(start, minimum), self.maximum)
    }

    /// The bytes a frame may take at the current rate.
    public var frameBytes: Int { bitRate / 8 / fps }

    /// Decides for a picture at `now` with `queued` bytes still waiting to leave.
    public mutating func decide(queued: Int, now: UInt64) -> Decision {
        if queued > frameBytes {
            clearSince = nil
            if now >= lastDrop + 100_000 {
                lastDrop = now
                bitRate = max(minimum, bitRate * 4 / 5)
            }
            return .skip
        }
        if queued == 0 {
            let since = clearSince ?? now
            clearSince = since
            if now >= since + 1_000_000 {
                bitRate = min(maximum, bitRate + bitRate / 10)
                clearSince = now
            }
        } else {
            clearSince = nil
        }
        return .encode
    }
}
