import CastBase
import CastProtocol
import Foundation

/// How far the demux thread reads ahead into the packet queues, as ffplay's `stream_has_enough_packets`: it reads on
/// while any played stream has at most `minimumPackets` packets or `minimumSeconds` of media queued, and waits once
/// every one has more of both. The queues' own bounds (count and bytes, `QueueLimits`) still hold beyond this: a
/// stream whose packets carry no duration, or one that lags the others in the file, is read ahead up to them, as
/// before.
///
/// Without it the demux thread read until a queue's byte bound (16 MiB of video): a 20 s 1080p clip of 13.7 MB sat
/// in the worker as packets (docs/performance.md). A few seconds per stream is what playback needs: the decoders take
/// from the front, and the read-ahead ring (`ReadAheadSource`) keeps the network's bytes ahead of that.
///
/// Thread-safety: the fills are in a `Monitor`; the queues report under their own lock (the lock order is a queue's,
/// then this one's), the demux thread waits here.
final class PacketBudget: Sendable {

    /// What one queue holds.
    struct Fill: Sendable, Equatable {
        /// Packets (and end markers) queued.
        var packets = 0
        /// The media seconds of the queued packets (the sum of their durations).
        var seconds = 0.0
    }

    /// Packets a stream keeps queued at least (ffplay's MIN_FRAMES).
    static let minimumPackets = 25
    /// Media seconds a stream keeps queued at least behind a read-ahead ring (`ReadAheadSource`, served media).
    /// ffplay keeps 1 s; here more than the buffering rule's refill (`BufferingRule.Thresholds.refill`, 2 s), so that
    /// a stall can end on what is queued and read ahead also where the ring holds less than a second (above about
    /// 70 Mbit/s).
    static let secondsBehindReadAhead = 3.0
    /// The same where FFmpeg reads the input itself (a URL, a local file): the packets are the only buffer against
    /// the network's hiccups.
    static let secondsWithoutReadAhead = 10.0

    /// Whether the demux thread reads another packet, given every queue's fill: while any stream is short.
    static func readsOn<Fills: Collection<Fill>>(_ fills: Fills, minimumSeconds: Double) -> Bool {
        fills.isEmpty || fills.contains { $0.packets <= minimumPackets || $0.seconds <= minimumSeconds }
    }

    /// Media seconds each stream keeps queued at least.
    let minimumSeconds: Double
    private let state = Monitor((fills: [ObjectIdentifier: Fill](), aborted: false))

    /// A budget keeping `minimumSeconds` per stream.
    init(minimumSeconds: Double) {
        self.minimumSeconds = minimumSeconds
    }

    /// `queue` holds `fill` now.
    func report(_ queue: ObjectIdentifier, _ fill: Fill) {
        state.withLock { $0.fills[queue] = fill }
    }

    /// Whether every stream has enough queued: the demux thread reads nothing more until a stage takes some.
    var hasEnough: Bool {
        let minimumSeconds = minimumSeconds
        return state.withLock { !$0.aborted && !Self.readsOn($0.fills.values, minimumSeconds: minimumSeconds) }
    }

    /// Waits until some stream is short of packets, or the budget is aborted (shutting down). Returns whether it had
    /// to wait (the demux thread then looks for a seek or a stop before it reads).
    func waitUntilShort() -> Bool {
        let minimumSeconds = minimumSeconds
        let short = { (state: (fills: [ObjectIdentifier: Fill], aborted: Bool)) in
            state.aborted || Self.readsOn(state.fills.values, minimumSeconds: minimumSeconds)
        }
        if state.withLock({ short($0) }) { return false }
        state.wait(until: short)
        return true
    }
}

extension PacketBudget: StageQueue {
    /// A seek empties the queues, which report it themselves.
    func flush(serial: Int) {}

    /// Wakes the demux thread for good.
    func abort() {
        state.withLock { $0.aborted = true }
    }
}
