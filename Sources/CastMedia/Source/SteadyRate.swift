/// The steady rate of an input read in steps (`ReadAheadSource`): the distinct bytes between the ends of two reads over
/// the reading time between them, the last read's end and the last end at least `window` seconds of reading before it
/// (the first end while none is that old). Measured from one read's end to another's, the bytes arriving a read's worth
/// at a time neither raise nor lower it, and a gap more than `window` back (a sender's TCP retransmitting while it
/// starts) no longer counts. A value type: its owner guards it.
struct SteadyRate {
    /// The reading time and the distinct bytes at each read's end kept: the base end first.
    private var ends: [(elapsed: Double, distinct: Int64)] = []
    let window: Double
    /// The most ends kept (many short reads from castd's cache): past it the oldest go, and the window is shorter.
    static let limit = 256

    init(window: Double = 4) { self.window = window }

    /// A read that delivered bytes ended: `elapsed` seconds of reading so far, `distinct` bytes of the input so far.
    mutating func record(elapsed: Double, distinct: Int64) {
        ends.append((elapsed, distinct))
        // Keep the last end at least `window` before the newest, and what follows it; the first stays while it is the
        // only one that old or older.
        if let base = ends.lastIndex(where: { $0.elapsed <= elapsed - window }), base > 0 {
            ends.removeFirst(base)
        }
        if ends.count > Self.limit { ends.removeFirst(ends.count - Self.limit) }
    }

    /// The distinct bytes and the reading time between the base end and the last; zeros before two ends.
    var span: (bytes: Int64, time: Double) {
        guard let first = ends.first, let last = ends.last else { return (0, 0) }
        return (last.distinct - first.distinct, last.elapsed - first.elapsed)
    }
}
