/// Bytes per second of reading over the last `window` seconds of time spent inside reads: the measured input rate
/// of `ReadAheadSource` (its upstream) and of the demux thread (an input FFmpeg reads itself).
///
/// Time is "reading time": it only advances while an upstream read is in progress, so idle periods (a full
/// buffer, the end of input) neither dilute the rate nor age it out. A value type: its owner guards it.
struct RateMeter {
    /// One finished read: its span on the reading-time axis, and what it delivered.
    private struct Sample {
        var start: Double
        var end: Double
        var bytes: Int
    }

    let window: Double
    private var samples: [Sample] = []
    /// Total reading time of finished reads.
    private(set) var elapsed: Double = 0

    init(window: Double) { self.window = window }

    mutating func record(bytes: Int, duration: Double) {
        let duration = max(duration, 0)
        samples.append(Sample(start: elapsed, end: elapsed + duration, bytes: bytes))
        elapsed += duration
        // Keep only what the window can still reach (a read in progress only moves the window forward).
        if let stale = samples.firstIndex(where: { $0.end > elapsed - window }), stale > 0 {
            samples.removeFirst(stale)
        }
    }

    /// The rate at `now`, counting a read in progress since `readStarted` as reading time without bytes yet.
    func rate(now: Double, readStarted: Double?) -> Double? {
        let current = elapsed + max(now - (readStarted ?? now), 0)
        guard !samples.isEmpty || readStarted != nil else { return nil }
        let from = max(current - window, 0)
        var bytes = 0.0
        for sample in samples where sample.end > from {
            let length = sample.end - sample.start
            // A read straddling the window's start counts in proportion.
            let share = length > 0 ? (sample.end - max(sample.start, from)) / length : 1
            bytes += Double(sample.bytes) * share
        }
        let span = current - from
        guard span > 0 else { return nil }
        return bytes / span
    }
}
