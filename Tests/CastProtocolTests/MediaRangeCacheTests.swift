import XCTest

@testable import CastProtocol

final class MediaRangeCacheTests: XCTestCase {
    /// A block of memory as the owner would have it: only its identity matters here.
    private final class Block {}

    private func spans(_ cache: MediaRangeCache<Block>) -> [ClosedRange<Int64>] {
        cache.ranges.map { $0.offset...($0.end - 1) }
    }

    func testAReadInsideAKnownRangeIsAnsweredFromItsBlock() throws {
        var cache = MediaRangeCache<Block>(capacity: 1000)
        let block = Block()
        cache.insert(offset: 100, count: 50, block: block)
        let hit = try XCTUnwrap(cache.lookup(120))
        XCTAssertTrue(hit.block === block)
        XCTAssertEqual(hit.start, 20)
        XCTAssertEqual(hit.count, 30)
        XCTAssertNil(cache.lookup(150))
        XCTAssertNil(cache.lookup(99))
        XCTAssertTrue(cache.contains(149))
    }

    func testBytesKnownAlreadyAreNotKeptTwice() throws {
        var cache = MediaRangeCache<Block>(capacity: 1000)
        let first = Block()
        let second = Block()
        cache.insert(offset: 100, count: 100, block: first)
        // Overlaps the first range at both ends: only [50, 100) and [200, 250) are new, held by `second`.
        cache.insert(offset: 50, count: 200, block: second, start: 10)
        XCTAssertEqual(spans(cache), [50...99, 100...199, 200...249])
        XCTAssertEqual(cache.bytes, 200)
        let tail = try XCTUnwrap(cache.lookup(210))
        XCTAssertTrue(tail.block === second)
        XCTAssertEqual(tail.start, 10 + 160)
        XCTAssertEqual(tail.count, 40)
        XCTAssertTrue(try XCTUnwrap(cache.lookup(150)).block === first)
        // Nothing new at all.
        cache.insert(offset: 60, count: 100, block: Block())
        XCTAssertEqual(cache.bytes, 200)
    }

    func testTheLeastRecentlyUsedRangeGoesFirstAndItsBlockIsFreed() {
        var cache = MediaRangeCache<Block>(capacity: 300)
        weak var freed: Block?
        do {
            let block = Block()
            freed = block
            cache.insert(offset: 0, count: 100, block: block)
        }
        cache.insert(offset: 1000, count: 100, block: Block())
        cache.insert(offset: 2000, count: 100, block: Block())
        // A seek back to the first range uses it again: the second is the least recently used now.
        XCTAssertNotNil(cache.lookup(50))
        cache.insert(offset: 3000, count: 100, block: Block())
        XCTAssertEqual(spans(cache), [0...99, 2000...2099, 3000...3099])
        XCTAssertEqual(cache.bytes, 300)
        XCTAssertNotNil(freed)
        cache.insert(offset: 4000, count: 250, block: Block())
        XCTAssertEqual(spans(cache), [4000...4249])
        XCTAssertNil(freed, "a block no range holds is freed")
    }

    func testMissingAsksOnlyForTheGapsNotKnownOrInFlight() {
        var cache = MediaRangeCache<Block>(capacity: 10_000)
        cache.insert(offset: 0, count: 100, block: Block())
        cache.insert(offset: 300, count: 100, block: Block())
        let inFlight = [MediaRead(offset: 500, length: 200)]
        let reads = cache.missing(from: 50, depth: 1000, length: 150, size: nil, inFlight: inFlight, free: 10)
        XCTAssertEqual(
            reads,
            [
                MediaRead(offset: 100, length: 150), MediaRead(offset: 250, length: 50),
                MediaRead(offset: 400, length: 100), MediaRead(offset: 700, length: 150),
                MediaRead(offset: 850, length: 150), MediaRead(offset: 1000, length: 50),
            ])
        // Bounded by the places free and by the media's size.
        XCTAssertEqual(
            cache.missing(from: 50, depth: 1000, length: 150, size: nil, inFlight: inFlight, free: 2).count, 2)
        XCTAssertEqual(
            cache.missing(from: 50, depth: 1000, length: 150, size: 320, inFlight: inFlight, free: 10),
            [MediaRead(offset: 100, length: 150), MediaRead(offset: 250, length: 50)])
        // Everything known: nothing to ask.
        XCTAssertEqual(cache.missing(from: 300, depth: 100, length: 150, size: nil, inFlight: [], free: 10), [])
        XCTAssertEqual(cache.missing(from: 400, depth: 0, length: 150, size: nil, inFlight: [], free: 10), [])
    }

    func testASeekAwayAndBackFetchesNothingTwice() {
        // A file of 10 ranges read from the start, then its end (an index at the end), then from the start again:
        // every byte is asked for once.
        var cache = MediaRangeCache<Block>(capacity: 1 << 20)
        var asked = 0
        func read(at position: Int64) {
            if cache.contains(position) { return }
            for read in cache.missing(from: position, depth: 300, length: 100, size: 1000, inFlight: [], free: 4) {
                asked += read.length
                cache.insert(offset: read.offset, count: read.length, block: Block())
            }
        }
        read(at: 0)
        read(at: 950)
        for position in stride(from: 0 as Int64, to: 1000, by: 10) { read(at: position) }
        XCTAssertEqual(asked, 1000)
    }
}
