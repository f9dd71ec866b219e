// How far apart the members of a group wrote the same samples, from their captures' reads alone: a measure that holds
// from a stream's first byte (issue 31), where a fit over a second of reads straddles the start.
import Foundation

/// The members' skew window by window of the stream. Every member plays the same file from the same position, so byte
/// `c` of every capture is the same sample. For one member a read that brought the stream to `total` bytes at
/// `arrival` says the stream's byte 0 was due at `arrival − total / rate` or before (castd writes each period when its
/// clock says it is due; this reader and castd wake late, never early): that member's *lateness*. The least lateness
/// over the reads of one window of the stream (bytes `[k·W, (k+1)·W)`, the same bytes on every member) is where that
/// member stood in that window, and the skew of the window is the largest of those minus the least. Nothing is fitted
/// across windows, so the first window, from the stream's first byte, is as sure as any: each member's first read is
/// when its first samples came out.
public enum WriteSkew {
    /// One window of the stream.
    public struct Window: Sendable {
        /// Where the window begins in the stream (s of media from the first byte).
        public let start: Double
        /// The largest member's lateness minus the least (s).
        public let skew: Double
        /// Each member's least lateness in the window, on the reader's clock (s), in the order given.
        public let lateness: [Double]
    }

    /// The fewest reads of a member a window is judged by.
    public static let minimumReads = 3

    /// p50, p99 and the largest of a set of skews (s); nil when there are none.
    public struct Quantiles: Sendable {
        public let p50: Double
        public let p99: Double
        public let max: Double
        public let count: Int

        public init?(_ values: [Double]) {
            guard !values.isEmpty else { return nil }
            let sorted = values.sorted()
            p50 = sorted[sorted.count / 2]
            p99 = sorted[Int((Double(sorted.count - 1) * 0.99).rounded(.up))]
            max = sorted[sorted.count - 1]
            count = sorted.count
        }

        /// `p50 0.123 ms, p99 0.456 ms, max 0.789 ms (N windows)`.
        public var text: String {
            String(
                format: "p50 %.3f ms, p99 %.3f ms, max %.3f ms (%d windows)", p50 * 1000, p99 * 1000, max * 1000, count)
        }
    }

    /// The windows of `window` seconds that every member's reads cover, from the stream's first byte to `tail` seconds
    /// before the end of the shortest capture (castd's ALSA file plugin writes what it still holds at once when the
    /// device closes: those reads come early). `members`: each member's reads (arrival ns on one clock, bytes so far);
    /// `bytesPerSecond`: the capture's rate.
    public static func windows(
        _ members: [[FIFOCapture.Read]], bytesPerSecond: Double, window: Double = 0.25, tail: Double = 0.5
    ) -> [Window] {
        guard !members.isEmpty, window > 0, bytesPerSecond > 0 else { return [] }
        let windowBytes = window * bytesPerSecond
        let end = (members.map { $0.last?.total ?? 0 }.min() ?? 0) - Int(tail * bytesPerSecond)
        guard end > 0 else { return [] }
        // Per member, window index → least lateness and reads; a read belongs to the window of its last byte.
        let least: [[Int: (lateness: Double, reads: Int)]] = members.map { reads in
            var least: [Int: (lateness: Double, reads: Int)] = [:]
            for read in reads where read.total <= end {
                let index = Int(Double(read.total - 1) / windowBytes)
                let lateness = Double(read.arrival) / 1e9 - Double(read.total) / bytesPerSecond
                let before = least[index] ?? (.infinity, 0)
                least[index] = (Swift.min(before.lateness, lateness), before.reads + 1)
            }
            return least
        }
        let count = Int(Double(end) / windowBytes)
        return (0..<count).compactMap { index in
            // A window a member's reader took in fewer than `minimumReads` reads (this process held up: what castd
            // wrote waited in the pipe) says when the reader woke, not when castd wrote: not judged.
            let lateness = least.compactMap { $0[index] }.filter { $0.reads >= minimumReads }.map(\.lateness)
            guard lateness.count == members.count else { return nil }
            return Window(
                start: Double(index) * window, skew: lateness.max()! - lateness.min()!, lateness: lateness)
        }
    }

    /// The skews of the windows that begin in `range` (s of the stream).
    public static func quantiles(_ windows: [Window], in range: Range<Double>) -> Quantiles? {
        Quantiles(windows.filter { range.contains($0.start) }.map(\.skew))
    }
}
