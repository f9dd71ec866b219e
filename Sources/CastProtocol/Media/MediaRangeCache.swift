/// The byte ranges of served media that a reader received, kept so that nothing is fetched twice over the link: a
/// read inside a known range is answered from memory, a seek keeps every range, and answers that arrive after the
/// reader moved on (read ahead, still in flight at a seek) are kept like any other. Bounded: at most `capacity` bytes,
/// the least recently used range going first (mpv's stream cache, AVPlayer's loaded ranges).
///
/// It also plans what to ask for: the gaps between what is known and what is on its way, from the reading position
/// to `depth` bytes after it, each read clipped where known bytes begin, so that no byte is asked for while it is
/// known or in flight.
///
/// Each range is held by a `Block` of the owner (its memory, a class whose `deinit` frees it, so a block goes when no
/// range holds it any more). Value in, value out: no I/O, no clock (uses are ordered by a counter). Thread-safety: a
/// value; its owner guards it.
public struct MediaRangeCache<Block: AnyObject> {
    /// One range: `count` bytes at `offset`, held by `block` from its byte `start`.
    public struct Range {
        /// Where the range starts in the media.
        public var offset: Int64
        /// How many bytes (at least 1).
        public var count: Int
        /// Where `block` holds the byte at `offset`.
        public var start: Int
        /// The owner's memory for the range.
        public var block: Block
        /// The range's last use (insertion or lookup), as a tick of the cache's counter.
        var lastUse: UInt64

        /// One past the range's last byte.
        public var end: Int64 { offset + Int64(count) }
    }

    /// The most bytes kept.
    public let capacity: Int
    /// The ranges, by offset (they never overlap).
    public private(set) var ranges: [Range] = []
    /// The bytes kept now.
    public private(set) var bytes = 0
    private var tick: UInt64 = 0

    /// An empty cache of at most `capacity` (≥ 1) bytes.
    public init(capacity: Int) {
        precondition(capacity >= 1, "a cache holds at least a byte")
        self.capacity = capacity
    }

    /// Keeps the `count` bytes at `offset` that `block` holds from its byte `start`. Bytes already known are not kept
    /// twice: only the parts of the range not known yet are added (all held by `block`). The least recently used
    /// ranges go to make room; the new one is the most recently used.
    public mutating func insert(offset: Int64, count: Int, block: Block, start: Int = 0) {
        tick += 1
        var pieces: [Range] = []
        var next = offset
        let end = offset + Int64(count)
        // The parts of [offset, end) between the ranges known already.
        for range in ranges where range.end > next && range.offset < end {
            if range.offset > next {
                pieces.append(piece(from: next, to: range.offset, of: offset, start, block))
            }
            next = max(next, range.end)
        }
        if next < end { pieces.append(piece(from: next, to: end, of: offset, start, block)) }
        for range in pieces {
            let index = ranges.firstIndex { $0.offset > range.offset } ?? ranges.endIndex
            ranges.insert(range, at: index)
            bytes += range.count
        }
        evict()
    }

    /// The known bytes at `position`: the range holding them, from `position` to its end; marks it used.
    public mutating func lookup(_ position: Int64) -> (block: Block, start: Int, count: Int)? {
        guard let index = index(holding: position) else { return nil }
        tick += 1
        ranges[index].lastUse = tick
        let range = ranges[index]
        let skip = Int(position - range.offset)
        return (range.block, range.start + skip, range.count - skip)
    }

    /// Whether the byte at `position` is known.
    public func contains(_ position: Int64) -> Bool { index(holding: position) != nil }

    /// The reads to send so that every byte from `position` to `depth` bytes after it (not past `size`, when known)
    /// is known or asked for: the gaps between the known ranges and `inFlight` (reads of this media sent and not
    /// answered), each at most `length` bytes and clipped where the next known or asked-for byte begins, at most
    /// `free` of them, nearest first.
    public func missing(
        from position: Int64, depth: Int, length: Int, size: Int64?, inFlight: [MediaRead], free: Int
    ) -> [MediaRead] {
        precondition(length >= 1, "a read of at least a byte")
        var limit = position + Int64(max(depth, 0))
        if let size { limit = min(limit, size) }
        // Known and asked-for spans, by start.
        var taken = ranges.map { (offset: $0.offset, end: $0.end) }
        taken += inFlight.map { (offset: $0.offset, end: $0.offset + Int64($0.length)) }
        taken.sort { $0.offset < $1.offset }
        var planned: [MediaRead] = []
        var next = position
        var spans = taken[...]
        while next < limit && planned.count < free {
            // Skip the spans that end before `next`; a span holding `next` moves it to the span's end.
            if let span = spans.first, span.end <= next {
                spans.removeFirst()
                continue
            }
            if let span = spans.first, span.offset <= next {
                next = span.end
                spans.removeFirst()
                continue
            }
            let stop = min(limit, spans.first?.offset ?? limit, next + Int64(length))
            planned.append(MediaRead(offset: next, length: Int(stop - next)))
            next = stop
        }
        return planned
    }

    // MARK: Helpers

    private func piece(from lower: Int64, to upper: Int64, of offset: Int64, _ start: Int, _ block: Block) -> Range {
        Range(offset: lower, count: Int(upper - lower), start: start + Int(lower - offset), block: block, lastUse: tick)
    }

    private func index(holding position: Int64) -> Int? {
        // The last range starting at or before `position` (ranges never overlap).
        var low = 0
        var high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].offset <= position { low = middle + 1 } else { high = middle }
        }
        guard low > 0, ranges[low - 1].end > position else { return nil }
        return low - 1
    }

    /// Lets go of the least recently used ranges until at most `capacity` bytes are kept.
    private mutating func evict() {
        while bytes > capacity, let oldest = ranges.indices.min(by: { ranges[$0].lastUse < ranges[$1].lastUse }) {
            bytes -= ranges.remove(at: oldest).count
        }
    }
}

extension MediaRangeCache: Sendable where Block: Sendable {}
extension MediaRangeCache.Range: Sendable where Block: Sendable {}
