import CastBase
import CastProtocol
import Foundation

/// A source that reads its upstream ahead of the engine on a thread of its own, so that the demux thread is served
/// from memory and a slow network read only stalls playback once the buffer has run dry.
///
/// The reader thread keeps up to `capacity` bytes buffered ahead of the consumer's position, reading at most `chunk`
/// bytes at a time (about a quarter second's worth at the measured rate, so a slow link delivers early). Until the
/// consumer says it has probed the input (`probed()`), each read asks for about `probeReadTarget` seconds' worth (at
/// least `probeRead` bytes): what is asked for ahead of the consumer is answered in order, before a seek's bytes (an
/// MP4's index at the end), so a small read keeps that wait short while the link stays busy. Behind the
/// position it keeps at least `backBuffer` bytes (more while the buffer is not full), so that FFmpeg's small
/// backward seeks are served from memory. A seek outside the buffered window bumps a serial, drops
/// the buffer and lets the reader thread seek upstream; whatever it was reading under the old serial is discarded
/// (ffplay's serial, applied to bytes).
///
/// Thread-safety: one `NSCondition` guards all state (the buffer, the positions, the statistics). The upstream's
/// `read` and `seek` are only called by the reader thread; `cancel()` calls the upstream's `cancel()`, which the
/// `MediaSource` contract allows from any thread. `read(into:)` and `seek(to:)` are called by one thread at a time
/// (the engine's demux thread); `cancel()` and the statistics may be used from any thread.
public final class ReadAheadSource: MediaSource {
    private let core: Core
    private let upstream: any MediaSource

    /// Wraps `upstream` and starts reading it ahead at once, up to `capacity` bytes beyond the consumer's position,
    /// at most `chunk` bytes per upstream read; at least `backBuffer` bytes behind the position stay available for
    /// seeking back. The reader thread ends with `cancel()`, or when this source is released.
    public init(
        _ upstream: any MediaSource, capacity: Int = 8 << 20, chunk: Int = 1 << 20, backBuffer: Int = 256 << 10
    ) {
        precondition(
            capacity > 0 && chunk > 0 && backBuffer >= 0, "ReadAheadSource needs a positive capacity and chunk")
        self.upstream = upstream
        self.core = Core(upstream: upstream, capacity: capacity, chunk: min(chunk, capacity), backBuffer: backBuffer)
        startDetachedThread(name: "CastMedia.readAhead") { [core] in core.runReader() }
    }

    deinit {
        // Nobody can read any more: end the reader thread, which holds the core (and the upstream) until it returns.
        core.cancel()
    }

    /// Copies buffered bytes at the current position, waiting only while nothing is buffered; returns 0 at the end
    /// of input. Throws the upstream's failure once the bytes before it were read, and a cancellation error
    /// after `cancel()`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try core.read(into: buffer)
    }

    /// Moves to `offset`: within the buffered window (or the back-buffer) at once, otherwise by dropping the buffer
    /// and refilling from `offset`. A failure of the upstream's seek is thrown by the next read.
    public func seek(to offset: Int64) throws {
        try core.seek(to: offset)
    }

    /// The consumer has probed the input (opened it, found its streams): reads grow to their measured size from now on.
    public func probed() {
        core.probed()
    }

    /// Wakes every waiting read for good (they throw), ends the reader thread and cancels the upstream.
    public func cancel() {
        core.cancel()
    }

    /// The upstream's size.
    public var size: Int64? { upstream.size }
    /// Whether the upstream can seek.
    public var isSeekable: Bool { upstream.isSeekable }
    /// The upstream's name hint.
    public var nameHint: String? { upstream.nameHint }

    /// How many bytes are buffered ahead of the consumer's position.
    public var bufferedBytes: Int { core.statistics.buffered }
    /// How many bytes the upstream delivered in total (including bytes dropped by seeks).
    public var bytesReceived: Int64 { core.statistics.received }
    /// How many distinct bytes of the input the upstream delivered: a range delivered again (after a seek) counts once.
    public var distinctBytesReceived: Int64 { core.statistics.distinct }
    /// The upstream's delivery rate in bytes per second over about the last 2 s spent reading it; nil before the
    /// first upstream read.
    ///
    /// Time the reader spends waiting for room (a full buffer) does not count, so a full buffer reports what the
    /// upstream can deliver rather than what the engine consumes; a read that hangs pulls the rate towards 0.
    public var inputRate: Double? { core.statistics.rate }
    /// Whether the upstream reached its end (at the position the reader was reading from).
    public var isAtEnd: Bool { core.statistics.atEnd }
    /// The input's bytes still to arrive: from the consumer's position to the end, less those delivered since it
    /// probed or last seeked outside the buffer after that (an MP4's index at the end, read while probing, is not
    /// read again; what a seek after probing left behind may be); nil when the upstream's size is unknown.
    public var bytesLeft: Int64? { core.statistics.bytesLeft }
    /// Seconds spent inside upstream reads in total (waits for room in a full buffer do not count).
    public var readingTime: Double { core.statistics.readingTime }
    /// Every statistic at one instant, read under one lock.
    var snapshot: Statistics { core.statistics }

    /// What the read-ahead holds and has read, at one instant.
    struct Statistics {
        /// Bytes buffered ahead of the consumer's position.
        var buffered: Int
        /// Bytes the upstream delivered in total.
        var received: Int64
        /// Distinct bytes of the input the upstream delivered (a range delivered again counts once).
        var distinct: Int64
        /// The upstream's delivery rate (bytes/s) over about the last 2 s of reading; nil before the first read.
        var rate: Double?
        /// Whether the upstream reached its end where the reader reads.
        var atEnd: Bool
        /// Seconds spent inside upstream reads.
        var readingTime: Double
        /// The distinct bytes delivered over the last seconds of reading time (`SteadyRate`), from one read's end to
        /// the last's: the steady rate, which neither the first bytes' latency (the request's way through castd and the
        /// sender), nor a read in progress, nor a gap long past (the retransmissions of a TCP that overshot the link's
        /// queue while starting) lowers.
        var steadyBytes: Int64
        var steadyTime: Double
        /// Whether the reader waits for room: it reads nothing more until the consumer takes some.
        var full: Bool
        /// Whether the upstream failed where the reader reads: nothing more arrives until a seek.
        var failed: Bool
        /// The input's bytes from the consumer's position to its end that the upstream has not delivered since the
        /// consumer probed it or last moved away after that (what is still to arrive: an index at the end that was
        /// read while probing is not read again); nil without a size.
        var bytesLeft: Int64?
    }
}

extension ReadAheadSource {
    /// The state shared by the consumer and the reader thread. Kept apart from `ReadAheadSource` so that the reader
    /// thread does not keep the source alive: releasing the source cancels the core.
    private final class Core: @unchecked Sendable {
        // Invariant: every `var` below is read and written only while `condition` is locked, and `ring` memory is
        // only touched while it is locked, except the span the reader thread reserved for its upstream read (just
        // past `windowEnd`, outside `[windowStart, windowEnd)`), which only that read writes, outside the lock, and
        // nobody reads until it is appended under the lock. `upstream.read`/`seek` are only called by the reader
        // thread, outside the lock; the `let`s never change.
        private let condition = NSCondition()
        private let upstream: any MediaSource
        private let capacity: Int
        private let chunk: Int
        private let size: Int64?
        private var ring: Ring

        /// Bumped by every seek that drops the buffer; bytes read under an older serial are discarded.
        private var serial = 0
        /// The absolute offsets of the buffered bytes: `[windowStart, windowEnd)`, with the consumer's position
        /// between them. Bytes before the position are the back-buffer.
        private var windowStart: Int64 = 0
        private var windowEnd: Int64 = 0
        private var position: Int64 = 0
        /// Where the reader thread must seek the upstream before its next read.
        private var pendingSeek: Int64?
        /// The upstream returned 0 at `windowEnd`.
        private var atEnd = false
        /// The upstream's failure at `windowEnd`; the reader stops until a seek.
        private var failure: (any Error)?
        private var cancelled = false
        private var received: Int64 = 0
        /// The input's ranges the upstream delivered, for `distinct`.
        private var delivered = DeliveredRanges()
        /// The ranges delivered since the consumer's last seek that dropped the buffer after probing (or since the
        /// start), for `bytesLeft`: what the consumer will not ask for again. The seeks while probing keep them (an MP4's
        /// index at the end, read once); a later one drops them, as what was delivered before may have to come again.
        private var deliveredSinceSeek = DeliveredRanges()
        private var meter = RateMeter(window: 2)
        /// The steady rate: the reading time and the distinct bytes at the ends of the reads that delivered bytes.
        private var steadyRate = SteadyRate()
        /// Until the consumer probed the input, reads ask for at most `probeRead` bytes.
        private var probing = true
        /// When the upstream read in progress began (seconds of the monotonic clock), nil between reads.
        private var readStarted: Double?

        init(upstream: any MediaSource, capacity: Int, chunk: Int, backBuffer: Int) {
            self.upstream = upstream
            self.capacity = capacity
            self.chunk = chunk
            self.size = upstream.size
            self.ring = Ring(count: capacity + backBuffer)
        }

        deinit { ring.deallocate() }

        // MARK: Consumer side

        func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            guard buffer.count > 0 else { return 0 }
            condition.lock()
            defer { condition.unlock() }
            while !cancelled && position == windowEnd && !atEnd && failure == nil { condition.wait() }
            if cancelled { throw MediaError.other("reading ahead was cancelled") }
            let available = Int(windowEnd - position)
            if available == 0 {
                if let failure { throw failure }
                return 0
            }
            let count = min(available, buffer.count)
            ring.copy(from: position, count: count, to: buffer)
            position += Int64(count)
            condition.broadcast()
            return count
        }

        func seek(to offset: Int64) throws {
            guard offset >= 0 else { throw MediaError.other("seek to a negative offset (\(offset))") }
            condition.lock()
            defer { condition.unlock() }
            if cancelled { throw MediaError.other("reading ahead was cancelled") }
            if offset >= windowStart && offset <= windowEnd {
                position = offset
                condition.broadcast()
                return
            }
            guard upstream.isSeekable else { throw MediaError.other("the source cannot seek outside its buffer") }
            serial += 1
            if !probing { deliveredSinceSeek = DeliveredRanges() }
            windowStart = offset
            windowEnd = offset
            position = offset
            pendingSeek = offset
            atEnd = false
            failure = nil
            condition.broadcast()
        }

        func probed() {
            condition.withLock { probing = false }
        }

        func cancel() {
            condition.lock()
            let first = !cancelled
            cancelled = true
            condition.broadcast()
            condition.unlock()
            if first { upstream.cancel() }
        }

        var statistics: Statistics {
            let now = Self.now()
            return condition.withLock {
                Statistics(
                    buffered: Int(windowEnd - position), received: received, distinct: delivered.count,
                    rate: meter.rate(now: now, readStarted: readStarted), atEnd: atEnd,
                    readingTime: meter.elapsed + max(now - (readStarted ?? now), 0),
                    steadyBytes: steadyRate.span.bytes, steadyTime: steadyRate.span.time, full: hasNoRoom,
                    failed: failure != nil,
                    bytesLeft: size.map { size in
                        max(size - position - deliveredSinceSeek.count(in: position..<max(size, position)), 0)
                    })
            }
        }

        /// Whether less room is left than one chunk: the reader waits until the consumer takes some. Called locked.
        private var hasNoRoom: Bool { Int(windowEnd - position) + chunk > capacity }

        // MARK: Reader thread

        func runReader() {
            condition.lock()
            defer { condition.unlock() }
            while true {
                // Wait for something to do: a seek, or room for a whole chunk.
                while !cancelled && pendingSeek == nil && (atEnd || failure != nil || hasNoRoom) {
                    condition.wait()
                }
                if cancelled { return }
                let readSerial = serial
                if let target = pendingSeek {
                    pendingSeek = nil
                    condition.unlock()
                    var seekFailure: (any Error)?
                    do { try upstream.seek(to: target) } catch { seekFailure = error }
                    condition.lock()
                    if let seekFailure, serial == readSerial {
                        failure = seekFailure
                        condition.broadcast()
                    }
                    // A newer seek may have come meanwhile: look again before reading.
                    continue
                }
                let started = Self.now()
                // The upstream reads straight into the ring, no copy through a buffer of its own: the span after
                // `windowEnd` (up to the ring's end), taken out of the back-buffer before the lock is let go.
                let buffer = ring.span(at: windowEnd, count: readSize(now: started))
                windowStart = max(windowStart, windowEnd + Int64(buffer.count) - Int64(ring.count))
                readStarted = started
                condition.unlock()
                let offset = windowEnd
                let outcome = Result { try upstream.read(into: buffer) }
                let ended = Self.now()
                condition.lock()
                readStarted = nil
                let count = (try? outcome.get()) ?? 0
                received += Int64(count)
                if count > 0 {
                    delivered.insert(offset..<(offset + Int64(count)))
                    deliveredSinceSeek.insert(offset..<(offset + Int64(count)))
                }
                meter.record(bytes: count, duration: ended - started)
                if count > 0 { steadyRate.record(elapsed: meter.elapsed, distinct: delivered.count) }
                guard serial == readSerial else { continue }
                switch outcome {
                case .success(0): atEnd = true
                case .success(let count): windowEnd += Int64(min(count, buffer.count))
                case .failure(let error): failure = error
                }
                condition.broadcast()
            }
        }

        /// How much the next upstream read asks for: about `readTarget` seconds at the measured rate (so that on a slow
        /// link the first bytes, and each refill during a stall, arrive within a fraction of a second instead of
        /// after a whole chunk, and the buffered media grows in small steps), at least `minimumRead` bytes, at most
        /// `chunk`; `firstRead` before the rate is known, at most `probeRead` while the consumer probes. Called locked.
        private func readSize(now: Double) -> Int {
            let rate = meter.rate(now: now, readStarted: nil)
            if probing { return min(max(Int((rate ?? 0) * Self.probeReadTarget), Self.probeRead), chunk) }
            guard let rate else { return min(Self.firstRead, chunk) }
            return min(max(Int(rate * Self.readTarget), Self.minimumRead), chunk)
        }

        static let readTarget = 0.25
        static let minimumRead = 16 << 10
        static let firstRead = 64 << 10
        /// While the consumer probes, a read asks for about `probeReadTarget` seconds at the measured rate, at least
        /// `probeRead` bytes: with the reads a served source keeps in flight ahead of it (the worker's and castd's,
        /// docs/protocol.md), a third of a second or 100 KiB stand between a seek and its bytes, and a probe that
        /// reads megabytes (Matroska's streams) does not take them 16 KiB at a time on a fast link.
        static let probeRead = 16 << 10
        static let probeReadTarget = 0.05

        /// Seconds of the monotonic clock.
        private static func now() -> Double {
            Double(DispatchTime.now().uptimeNanoseconds) / 1e9
        }
    }

    /// Fixed memory addressed by absolute byte offsets modulo its size.
    private struct Ring {
        let storage: UnsafeMutableRawBufferPointer
        var count: Int { storage.count }

        init(count: Int) {
            storage = .allocate(byteCount: count, alignment: 16)
        }

        func deallocate() { storage.deallocate() }

        /// Copies `count` bytes starting at absolute `offset` into `target`.
        func copy(from offset: Int64, count: Int, to target: UnsafeMutableRawBufferPointer) {
            var done = 0
            while done < count {
                let index = Int((offset + Int64(done)) % Int64(storage.count))
                let run = min(count - done, storage.count - index)
                UnsafeMutableRawBufferPointer(rebasing: target[done..<(done + run)])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: storage[index..<(index + run)]))
                done += run
            }
        }

        /// The memory of up to `count` bytes from absolute `offset` onwards, in one piece: fewer where the ring
        /// wraps around.
        func span(at offset: Int64, count: Int) -> UnsafeMutableRawBufferPointer {
            let index = Int(offset % Int64(storage.count))
            return UnsafeMutableRawBufferPointer(rebasing: storage[index..<(index + min(count, storage.count - index))])
        }
    }
}

/// The ranges of an input delivered so far, merged, and how many distinct bytes they hold: a range delivered again
/// (read again after a seek) is not counted twice. At most `limit` ranges are kept (the lowest go first, and may then
/// be counted again): a film read front to back, with a few seeks while probing, needs a handful.
private struct DeliveredRanges {
    private var ranges: [Range<Int64>] = []
    private(set) var count: Int64 = 0
    static let limit = 64

    mutating func insert(_ range: Range<Int64>) {
        guard !range.isEmpty else { return }
        var merged = range
        var kept: [Range<Int64>] = []
        var covered: Int64 = 0
        for existing in ranges {
            if existing.upperBound < merged.lowerBound || existing.lowerBound > merged.upperBound {
                kept.append(existing)
            } else {
                covered += max(
                    min(existing.upperBound, range.upperBound) - max(existing.lowerBound, range.lowerBound), 0)
                merged = min(existing.lowerBound, merged.lowerBound)..<max(existing.upperBound, merged.upperBound)
            }
        }
        count += Int64(range.count) - covered
        kept.append(merged)
        kept.sort { $0.lowerBound < $1.lowerBound }
        if kept.count > Self.limit { kept.removeFirst(kept.count - Self.limit) }
        ranges = kept
    }

    /// How many of the bytes in `range` were delivered.
    func count(in range: Range<Int64>) -> Int64 {
        ranges.reduce(0) { sum, kept in
            sum + max(min(kept.upperBound, range.upperBound) - max(kept.lowerBound, range.lowerBound), 0)
        }
    }
}
