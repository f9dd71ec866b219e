/// How fast `cast mirror` encodes: follows how fast pictures leave, so that no queue grows. A pure rule with time as
/// an input (microseconds); the helper asks it before each picture.
///
/// The queue it watches is the bytes written and not yet taken by `cast` (which takes them as the receiver asks for
/// more, one read in flight). More than a picture's worth waiting: this picture is skipped (a later one carries the
/// change; the receiver shows the last one meanwhile). A queue that has not drained for `congestion` (100 ms, three
/// pictures at 30 a second) means the link is slower than the encoder: the rate drops by a fifth, at most every
/// `congestion`. After a second in which every picture found the queue empty, it rises by a tenth, up to the maximum.
/// A picture larger than its share (an intra refresh, a scene change) only makes the next ones wait or skip: the rate
/// drops for a queue that stays, not for one picture. On a slow link the picture gets softer, never later.
public struct MirrorRate: Sendable, Equatable {
    /// The bit rate now, bits per second.
    public private(set) var bitRate: Int
    /// The most it goes to.
    public let maximum: Int
    /// The least it goes to.
    public let minimum: Int
    private let fps: Int
    private var lastDrop: UInt64 = 0
    /// Since when the queue has not been empty.
    private var queuedSince: UInt64?
    /// Since when every picture found the queue empty.
    private var clearSince: UInt64?
    /// How long a queue may stay before the rate drops.
    public static let congestion: UInt64 = 100_000

    /// What to do with the picture at hand.
    public enum Decision: Sendable, Equatable {
        /// Encode it.
        case encode
        /// Skip it: the queue holds more than a picture.
        case skip
    }

    /// Starts at `start` (clamped) between `minimum` and `maximum` bits per second, for `fps` pictures a second.
    public init(start: Int, minimum: Int, maximum: Int, fps: Int) {
        self.maximum = max(maximum, minimum)
        self.minimum = minimum
        self.fps = max(fps, 1)
        self.bitRate = min(max(start, minimum), self.maximum)
    }

    /// The bytes a picture may take at the current rate.
    public var frameBytes: Int { bitRate / 8 / fps }

    /// Decides for a picture at `now` with `queued` bytes still waiting to leave.
    public mutating func decide(queued: Int, now: UInt64) -> Decision {
        guard queued > 0 else {
            queuedSince = nil
            let since = clearSince ?? now
            clearSince = since
            if now >= since + 1_000_000 {
                bitRate = min(maximum, bitRate + bitRate / 10)
                clearSince = now
            }
            return .encode
        }
        clearSince = nil
        let since = queuedSince ?? now
        queuedSince = since
        if now >= since + Self.congestion && now >= lastDrop + Self.congestion {
            lastDrop = now
            bitRate = max(minimum, bitRate * 4 / 5)
        }
        return queued > frameBytes ? .skip : .encode
    }
}
