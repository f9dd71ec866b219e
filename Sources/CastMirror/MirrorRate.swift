/// How fast `cast mirror` encodes: follows how fast pictures leave, so that no queue grows. A pure rule with time as
/// an input (microseconds); the helper tells it what it wrote and asks it before each picture.
///
/// The queue it watches is the bytes written and not yet taken by `cast` (which takes them as the receiver asks for
/// more, one read in flight). More than a picture's worth waiting: this picture is skipped (a later one carries the
/// change; the receiver shows the last one meanwhile). A queue that has not drained for `congestion` (100 ms, three
/// pictures at 30 a second) has two causes. Either the link carries fewer bits than the rate asks for (more than a
/// picture's worth waits): then the rate drops to nine tenths of what left over the last half second (at most every
/// `congestion`), and the picture gets softer, never later. Or the receiver takes each picture slowly whatever its
/// size (a busy machine; the queue holds less than a picture's worth): then skipping is the answer and the rate
/// stays, since smaller pictures would not leave sooner. After a second in which every
/// picture found the queue empty, the rate rises by a tenth, up to the maximum.
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
    /// The bytes that left since `measuredSince`, and the queue as last seen.
    private var left = 0
    private var measuredSince: UInt64?
    private var lastQueued = 0
    private var writtenSinceLook = 0
    /// Whether the queue held something at every look of the window being measured: only then do the bytes that left
    /// say what the link carries (an idle link's bytes say only what was written).
    private var saturated = true
    /// What left over the last measured window while the queue never emptied (what the link carries), bits per second;
    /// nil before such a window.
    public private(set) var leaving: Int?
    /// How long a queue may stay before the rate is looked at.
    public static let congestion: UInt64 = 100_000
    /// How long the bytes that leave are counted before `leaving` is updated.
    public static let measurement: UInt64 = 500_000

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

    /// `bytes` were written to the queue.
    public mutating func wrote(_ bytes: Int) { writtenSinceLook += bytes }

    /// Decides for a picture at `now` with `queued` bytes still waiting to leave.
    public mutating func decide(queued: Int, now: UInt64) -> Decision {
        measure(queued: queued, now: now)
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
        // Bytes are what holds the queue only when more than a picture's worth waits: a few small pictures that wait
        // for a slow receiver would not leave sooner if they were smaller.
        if queued > frameBytes, now >= since + Self.congestion, now >= lastDrop + Self.congestion, let leaving,
            leaving < bitRate
        {
            lastDrop = now
            bitRate = max(minimum, leaving * 9 / 10)
        }
        return queued > frameBytes ? .skip : .encode
    }

    /// Counts what left since the last look: what was queued then, plus what was written, minus what is queued now.
    private mutating func measure(queued: Int, now: UInt64) {
        left += max(0, lastQueued + writtenSinceLook - queued)
        lastQueued = queued
        writtenSinceLook = 0
        if queued == 0 { saturated = false }
        let since = measuredSince ?? now
        measuredSince = since
        if now >= since + Self.measurement {
            leaving = saturated ? Int(Double(left * 8) * 1e6 / Double(now - since)) : nil
            left = 0
            measuredSince = now
            saturated = true
        }
    }
}
