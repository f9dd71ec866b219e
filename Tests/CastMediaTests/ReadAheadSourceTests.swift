import CastMedia
import CastTestSupport
import Foundation
import XCTest

final class ReadAheadSourceTests: XCTestCase {
    func testCopyThroughRandomSizedReadsIsIdentical() throws {
        let (path, bytes) = try Fixtures.randomFile(size: 5_000_000, seed: 1)
        // A small ring (1 MiB + 256 KiB), so that the copy wraps around it many times.
        let source = ReadAheadSource(try FileSource(path: path), capacity: 1 << 20, chunk: 64 << 10)
        XCTAssertEqual(source.size, 5_000_000)
        XCTAssertEqual(source.nameHint, "random.bin")
        XCTAssertTrue(source.isSeekable)

        var random = SplitMix64(seed: 2)
        var copy = [UInt8]()
        var reads = 0
        while true {
            let chunk = try source.read(count: Int.random(in: 1...200_000, using: &random))
            if chunk.isEmpty { break }
            copy += chunk
            reads += 1
        }
        XCTAssertEqual(copy.count, bytes.count)
        assertSameBytes(copy, bytes)
        XCTAssertGreaterThan(reads, 40)
        XCTAssertTrue(source.isAtEnd)
        XCTAssertEqual(source.bytesReceived, 5_000_000)
        XCTAssertEqual(try source.read(count: 10), [], "reads at the end return 0")
    }

    func testRandomSeeksInsideBehindAndFarAhead() throws {
        let (path, bytes) = try Fixtures.randomFile(size: 5_000_000, seed: 3)
        let upstream = ScriptedSource(wrapping: try FileSource(path: path))
        let capacity = 1 << 20
        let backBuffer = 256 << 10
        let source = ReadAheadSource(upstream, capacity: capacity, chunk: 64 << 10, backBuffer: backBuffer)
        var random = SplitMix64(seed: 4)
        var position: Int64 = 0
        // The lowest offset known to be buffered: where the last refill began.
        var floor: Int64 = 0

        for round in 0..<100 {
            let kind = round % 4
            let target: Int64
            switch kind {
            case 0:  // Inside the window, ahead of the position.
                target = position + Int64.random(in: 0...Int64(source.bufferedBytes), using: &random)
            case 1:  // Behind the position, within the back-buffer.
                let lowest = max(floor, position - Int64(backBuffer))
                target = Int64.random(in: lowest...position, using: &random)
            case 2:  // Far ahead of anything buffered, or far behind when there is no room ahead.
                // Past anything buffered: after a seek back into the back-buffer up to capacity + backBuffer bytes
                // may be buffered ahead of the position (the reader filled the ring before the seek).
                let ahead = position + Int64(capacity + backBuffer) + Int64.random(in: 1...1_000_000, using: &random)
                // The source stands at most at the end however far past it a read asked: a window ends there, and
                // a target just short of (position past the end) − (capacity + backBuffer) could still be in it.
                let behind = min(position, 5_000_000) - Int64(capacity + backBuffer)
                target = ahead < 5_000_000 ? ahead : Int64.random(in: 0..<behind, using: &random)
            default:  // Anywhere, including beyond the end.
                target = Int64.random(in: 0...5_001_000, using: &random)
            }
            let seeksBefore = upstream.seekCount
            try source.seek(to: target)
            let got = try source.read(exactly: 1000)
            let start = Int(min(target, 5_000_000))
            let expected = Array(bytes[start..<min(start + 1000, bytes.count)])
            assertSameBytes(got, expected, "round \(round), after seeking to \(target)")
            switch kind {
            case 0, 1:
                XCTAssertEqual(upstream.seekCount, seeksBefore, "round \(round): a seek in the window went upstream")
            case 2:
                XCTAssertEqual(upstream.seekCount, seeksBefore + 1, "round \(round): a far seek did not go upstream")
                floor = target
            default:
                if upstream.seekCount != seeksBefore { floor = target }
            }
            position = target + Int64(got.count)
        }
        // Only the far seeks and some of the random ones went upstream.
        XCTAssertLessThanOrEqual(upstream.seekCount, 50)
    }

    func testReadsAheadWhileTheConsumerWaits() throws {
        let upstream = ScriptedSource(size: 50 << 20, delayPerRead: 0.010)
        let source = ReadAheadSource(upstream)
        assertSameBytes(try source.read(exactly: 1000), Fixtures.pattern(0..<1000))
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertGreaterThan(source.bufferedBytes, 0)
        // 64 KiB every 10 ms: about 1.9 MiB in 300 ms, even on a slow machine more than a few reads.
        XCTAssertGreaterThan(source.bytesReceived, 4 * (64 << 10))
        // What was read ahead is served without waiting for the upstream.
        let buffered = source.bufferedBytes
        let started = Date()
        let got = try source.read(exactly: buffered)
        // Waiting for the upstream would take 10 ms per 64 KiB, over 300 ms for what was buffered.
        XCTAssertLessThan(Date().timeIntervalSince(started), 0.25)
        assertSameBytes(got, Fixtures.pattern(1000..<(1000 + buffered)))
    }

    func testCapacityIsRespected() throws {
        let capacity = 1 << 20
        let chunk = 64 << 10
        let upstream = ScriptedSource(size: 40 << 20)
        let source = ReadAheadSource(upstream, capacity: capacity, chunk: chunk)
        var highest = 0
        var offset = 0
        for step in 0..<300 {
            highest = max(highest, source.bufferedBytes)
            // Consume now and then, so the reader refills, in bursts of different sizes.
            if step % 20 == 19 {
                let count = (step % 60 + 1) * 5_000
                assertSameBytes(try source.read(exactly: count), Fixtures.pattern(offset..<(offset + count)))
                offset += count
            }
            Thread.sleep(forTimeInterval: 0.001)
        }
        highest = max(highest, source.bufferedBytes)
        XCTAssertLessThanOrEqual(highest, capacity + chunk)
        XCTAssertGreaterThanOrEqual(highest, capacity - chunk, "the reader never filled the buffer")
        // The reader stopped at the bound instead of reading the whole upstream.
        XCTAssertLessThanOrEqual(source.bytesReceived, Int64(offset + capacity + chunk))
    }

    func testCancelWakesABlockedReadPromptly() throws {
        let upstream = ScriptedSource(size: 1 << 20, blocksReads: true)
        let source = ReadAheadSource(upstream)
        let outcome = Outcome()
        let reading = Thread {
            do {
                _ = try source.read(count: 1000)
                outcome.set("returned")
            } catch {
                outcome.set("threw")
            }
        }
        reading.start()
        Thread.sleep(forTimeInterval: 0.1)
        XCTAssertNil(outcome.value, "the read should still be blocked")
        let cancelled = Date()
        source.cancel()
        // Without the wake-up the read would stay blocked for good; the bound is generous for a loaded machine.
        XCTAssertTrue(outcome.wait(timeout: 1), "the read was not woken within a second")
        XCTAssertLessThan(Date().timeIntervalSince(cancelled), 1)
        XCTAssertEqual(outcome.value, "threw")
        XCTAssertTrue(upstream.wasCancelled)
        XCTAssertThrowsError(try source.read(count: 10))
        upstream.unblock()
    }

    func testUpstreamFailureSurfacesAfterThePrecedingBytes() throws {
        let upstream = ScriptedSource(size: 1 << 20, failsAt: 300_000)
        let source = ReadAheadSource(upstream, chunk: 64 << 10)
        var got = [UInt8]()
        var failure: (any Error)?
        while failure == nil {
            do {
                let chunk = try source.read(count: 70_000)
                XCTAssertFalse(chunk.isEmpty, "end of input before the failure")
                if chunk.isEmpty { break }
                got += chunk
            } catch {
                failure = error
            }
        }
        XCTAssertEqual(got.count, 300_000)
        assertSameBytes(got, Fixtures.pattern(0..<300_000))
        XCTAssertEqual(failure as? ScriptedSource.Failure, ScriptedSource.Failure())
        XCTAssertThrowsError(try source.read(count: 10), "the failure stays until a seek") { error in
            XCTAssertEqual(error as? ScriptedSource.Failure, ScriptedSource.Failure())
        }
        // Bytes before the failure can still be read again from the back-buffer.
        try source.seek(to: 299_000)
        assertSameBytes(try source.read(exactly: 1000), Fixtures.pattern(299_000..<300_000))
    }

    func testNonSeekableUpstreamIsReadSequentially() throws {
        let upstream = ScriptedSource(size: 3_000_000, seekable: false)
        let source = ReadAheadSource(upstream, capacity: 512 << 10, chunk: 64 << 10)
        XCTAssertFalse(source.isSeekable)
        XCTAssertNil(source.nameHint)
        var random = SplitMix64(seed: 5)
        var got = [UInt8]()
        while true {
            let chunk = try source.read(count: Int.random(in: 1...100_000, using: &random))
            if chunk.isEmpty { break }
            got += chunk
        }
        assertSameBytes(got, Fixtures.pattern(0..<3_000_000))
        XCTAssertEqual(upstream.seekCount, 0)
        XCTAssertTrue(source.isAtEnd)
    }

    func testSeekWhileAnUpstreamReadIsInFlightDiscardsItsBytes() throws {
        // Every upstream read takes 50 ms, so seeks land while one is in flight.
        let upstream = ScriptedSource(size: 100 << 20, delayPerRead: 0.05)
        let source = ReadAheadSource(upstream, chunk: 64 << 10)
        var random = SplitMix64(seed: 6)
        for _ in 0..<10 {
            Thread.sleep(forTimeInterval: Double.random(in: 0.005...0.03, using: &random))
            let target = Int.random(in: 0..<(90 << 20), using: &random)
            try source.seek(to: Int64(target))
            assertSameBytes(
                try source.read(exactly: 5000), Fixtures.pattern(target..<(target + 5000)), "after seeking to \(target)"
            )
        }
    }

    func testInputRateMatchesAThrottledUpstream() throws {
        // 64 KiB every 62.5 ms: 1 MiB/s.
        let upstream = ScriptedSource(size: 100 << 20, delayPerRead: 0.0625)
        let source = ReadAheadSource(upstream, chunk: 64 << 10)
        source.probed()
        Thread.sleep(forTimeInterval: 1.5)
        let rate = try XCTUnwrap(source.inputRate)
        XCTAssertEqual(rate, Double(1 << 20), accuracy: 0.3 * Double(1 << 20), "rate \(rate) B/s")
    }

    /// While the consumer probes, reads ask for little (what is asked for ahead is answered before a seek's bytes, an
    /// MP4's index at the end): a twentieth of a second at the measured rate, at least 16 KiB; once it has probed,
    /// they grow to the measured rate's quarter second. A range read again after a seek counts once among the
    /// distinct bytes.
    func testReadsAreSmallUntilTheConsumerProbedAndReadsAgainCountOnce() throws {
        // At most 64 KiB every 20 ms: about 800 KiB/s at the reads' 16 KiB, 40 KiB a twentieth of a second.
        let upstream = ScriptedSource(size: 10 << 20, delayPerRead: 0.02)
        let source = ReadAheadSource(upstream, capacity: 4 << 20, chunk: 1 << 20)
        XCTAssertEqual(try source.read(count: 100).count, 100)
        try source.seek(to: 9 << 20)
        XCTAssertEqual(try source.read(count: 100).count, 100)
        try source.seek(to: 0)
        XCTAssertEqual(try source.read(exactly: 20_000).count, 20_000)
        let probing = upstream.largestRead
        XCTAssertLessThanOrEqual(probing, 160 << 10, "reads while probing")
        source.probed()
        let deadline = Date().addingTimeInterval(10)
        while upstream.largestRead <= 2 * probing && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        XCTAssertGreaterThan(upstream.largestRead, 2 * probing, "reads once probed")
        // The bytes at 0 were read twice (before and after the seek to 9 MiB): counted once.
        let (distinct, received) = (source.distinctBytesReceived, source.bytesReceived)
        XCTAssertLessThan(distinct, received, "the range at 0 was read twice")
        XCTAssertGreaterThanOrEqual(distinct, 20_000 + 100)
    }

    /// The bytes still to arrive (what the buffering rule judges with): from the position to the end, less what was
    /// delivered there, the end read while probing (an MP4's index) included; a seek outside the buffer after probing
    /// forgets what was delivered before it, which may have to come again.
    func testBytesLeftLeaveOutWhatArrivedAheadUntilASeekAfterProbing() throws {
        let size: Int64 = 10 << 20
        let (capacity, chunk) = (256 << 10, 64 << 10)
        let source = ReadAheadSource(ScriptedSource(size: size), capacity: capacity, chunk: chunk, backBuffer: 0)
        /// Waits until the reader stops for want of room (less than a chunk left).
        func waitUntilFull() {
            let deadline = Date().addingTimeInterval(10)
            while source.bufferedBytes + chunk <= capacity && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            XCTAssertGreaterThan(source.bufferedBytes + chunk, capacity, "the reader fills the buffer")
        }
        // Probing: the start, the index at the end (100 000 bytes), the start again.
        XCTAssertEqual(try source.read(count: 100).count, 100)
        try source.seek(to: size - 100_000)
        XCTAssertEqual(try source.read(exactly: 100_000).count, 100_000)
        try source.seek(to: 0)
        XCTAssertEqual(try source.read(exactly: 20_000).count, 20_000)
        source.probed()
        waitUntilFull()
        XCTAssertEqual(source.bytesLeft, size - (20_000 + Int64(source.bufferedBytes)) - 100_000)
        // A seek after probing, outside the buffer: the end counts again.
        try source.seek(to: 5 << 20)
        XCTAssertEqual(try source.read(exactly: 1000).count, 1000)
        waitUntilFull()
        XCTAssertEqual(source.bytesLeft, size - ((5 << 20) + 1000 + Int64(source.bufferedBytes)))
        source.cancel()
    }

    func testReleasingTheSourceEndsTheReaderThread() throws {
        weak var released: ScriptedSource?
        do {
            let upstream = ScriptedSource(size: 10 << 20, delayPerRead: 0.005)
            released = upstream
            let source = ReadAheadSource(upstream)
            _ = try source.read(count: 100)
        }
        let deadline = Date().addingTimeInterval(1)
        while released != nil && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        XCTAssertNil(released, "the reader thread still holds the upstream")
    }
}

/// Compares byte arrays, reporting the first difference rather than both arrays.
private func assertSameBytes(
    _ actual: @autoclosure () throws -> [UInt8], _ expected: [UInt8], _ message: String = "",
    file: StaticString = #filePath, line: UInt = #line
) {
    let got: [UInt8]
    do { got = try actual() } catch {
        XCTFail("\(message): threw \(error)", file: file, line: line)
        return
    }
    guard got != expected else { return }
    let first =
        zip(got, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        ?? min(got.count, expected.count)
    XCTFail(
        "\(message): \(got.count) bytes, expected \(expected.count); first difference at \(first)", file: file,
        line: line)
}

/// A test upstream: pattern bytes (or another source's), optionally slow, failing, blocking or unseekable.
/// Reads return at most 64 KiB, like a network read.
private final class ScriptedSource: MediaSource, @unchecked Sendable {
    // Invariant: `offset`, `seeks` and `cancelled` are only used under `lock`; the `let`s never change.
    struct Failure: Error, Equatable {}

    private let lock = NSLock()
    private let wrapped: (any MediaSource)?
    private let length: Int64
    private let delayPerRead: Double
    private let failsAt: Int64?
    private let seekable: Bool
    private let gate: DispatchSemaphore?
    private var offset: Int64 = 0
    private var seeks = 0
    private var largest = 0
    private var cancelled = false

    init(
        size: Int64, delayPerRead: Double = 0, failsAt: Int64? = nil, seekable: Bool = true, blocksReads: Bool = false
    ) {
        self.wrapped = nil
        self.length = size
        self.delayPerRead = delayPerRead
        self.failsAt = failsAt
        self.seekable = seekable
        self.gate = blocksReads ? DispatchSemaphore(value: 0) : nil
    }

    init(wrapping source: any MediaSource) {
        self.wrapped = source
        self.length = source.size ?? 0
        self.delayPerRead = 0
        self.failsAt = nil
        self.seekable = true
        self.gate = nil
    }

    var seekCount: Int { lock.withLock { seeks } }
    /// The most bytes a read asked for.
    var largestRead: Int { lock.withLock { largest } }
    var wasCancelled: Bool { lock.withLock { cancelled } }

    /// Lets a blocked read return (0 bytes), so that the reader thread can end.
    func unblock() { gate?.signal() }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if let gate {
            gate.wait()
            return 0
        }
        if delayPerRead > 0 { Thread.sleep(forTimeInterval: delayPerRead) }
        let start = lock.withLock {
            largest = max(largest, buffer.count)
            return offset
        }
        if let wrapped {
            let count = try wrapped.read(into: buffer)
            lock.withLock { offset += Int64(count) }
            return count
        }
        if let failsAt, start >= failsAt { throw Failure() }
        let end = min(start + Int64(min(buffer.count, 64 << 10)), failsAt ?? length, length)
        guard end > start else { return 0 }
        for index in 0..<Int(end - start) { buffer[index] = Fixtures.patternByte(Int(start) + index) }
        lock.withLock { offset = end }
        return Int(end - start)
    }

    func seek(to offset: Int64) throws {
        precondition(seekable, "seek on an unseekable source")
        try wrapped?.seek(to: offset)
        lock.withLock {
            self.offset = offset
            seeks += 1
        }
    }

    var size: Int64? { length }
    var isSeekable: Bool { seekable }
    var nameHint: String? { wrapped?.nameHint }
    func cancel() { lock.withLock { cancelled = true } }
}

/// What a reading thread ended with, for the test to wait on.
private final class Outcome: @unchecked Sendable {
    // Invariant: `result` is only used while `condition` is locked.
    private let condition = NSCondition()
    private var result: String?

    var value: String? { condition.withLock { result } }

    func set(_ value: String) {
        condition.withLock {
            result = value
            condition.broadcast()
        }
    }

    /// Waits until a value is set; false on timeout.
    func wait(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        return condition.withLock {
            while result == nil {
                if !condition.wait(until: deadline) { return result != nil }
            }
            return true
        }
    }
}

extension Fixtures {
    /// A file of `size` random bytes in a fresh folder, with its contents.
    fileprivate static func randomFile(size: Int, seed: UInt64) throws -> (path: String, bytes: [UInt8]) {
        var random = SplitMix64(seed: seed)
        var bytes = [UInt8]()
        bytes.reserveCapacity(size + 8)
        while bytes.count < size { withUnsafeBytes(of: random.next()) { bytes += $0 } }
        bytes.removeLast(bytes.count - size)
        let path = try folder().appendingPathComponent("random.bin").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (path, bytes)
    }

    /// The byte a `ScriptedSource` serves at `offset`: not periodic at any power of two, so misplaced bytes show.
    fileprivate static func patternByte(_ offset: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: offset &* 7 &+ offset / 251 &+ offset / 65_521)
    }

    fileprivate static func pattern(_ range: Range<Int>) -> [UInt8] {
        range.map(patternByte)
    }
}

extension MediaSource {
    /// One read of up to `count` bytes.
    fileprivate func read(count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = try bytes.withUnsafeMutableBytes { try read(into: $0) }
        return Array(bytes[..<got])
    }

    /// Reads until `count` bytes or the end of input.
    fileprivate func read(exactly count: Int) throws -> [UInt8] {
        var bytes = [UInt8]()
        while bytes.count < count {
            let chunk = try read(count: count - bytes.count)
            if chunk.isEmpty { break }
            bytes += chunk
        }
        return bytes
    }
}
