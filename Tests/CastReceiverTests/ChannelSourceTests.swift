import CastMedia
import CastProtocol
import Foundation
import Glibc
import XCTest

@testable import CastReceiver

/// The worker's side of served media over a real channel (a socket pair), with the test playing castd.
final class ChannelSourceTests: XCTestCase {
    func testASessionReaderKeepsSeveralReadsInFlightAndTakesTheAnswersInOrder() throws {
        let lab = try Fixtures.Lab(readsInFlight: ChannelSource.sessionReadsInFlight)
        defer { lab.close() }
        let chunk = 64 << 10
        let got = lab.readInBackground(reads: 5, chunk: chunk)
        // Before anything is answered the reader has asked for the next ranges too.
        var asked: [MediaRead] = []
        for _ in 0..<ChannelSource.sessionReadsInFlight { asked.append(try lab.nextRead()) }
        XCTAssertEqual(asked.map(\.offset), (0..<ChannelSource.sessionReadsInFlight).map { Int64($0 * chunk) })
        XCTAssertTrue(asked.allSatisfy { $0.length == chunk })
        // Answered in order, each straight from the file; every read taken asks for the next range.
        var answered = 0
        while answered < 5 {
            let read = answered < asked.count ? asked[answered] : try lab.nextRead()
            if answered >= asked.count { asked.append(read) }
            try lab.answer(read)
            answered += 1
        }
        XCTAssertEqual(try got.wait(), Array(Fixtures.bytes[..<(5 * chunk)]))
        XCTAssertEqual(asked.map(\.offset), (0..<5).map { Int64($0 * chunk) })
    }

    func testAnAnswerOutOfOrderBreaksTheChannelAndTheReadFails() throws {
        let lab = try Fixtures.Lab(readsInFlight: 3)
        defer { lab.close() }
        let got = lab.readInBackground(reads: 1, chunk: 1000)
        let first = try lab.nextRead()
        let second = try lab.nextRead()
        XCTAssertEqual(second.offset, first.offset + 1000)
        try lab.answer(second)
        XCTAssertThrowsError(try got.wait())
        XCTAssertTrue(lab.channelError?.contains("order of answers") ?? false, "\(lab.channelError ?? "no error")")
    }

    func testAnAnswerLongerThanAskedOrToNoReadBreaksTheChannel() throws {
        for extra in [true, false] {
            let lab = try Fixtures.Lab(readsInFlight: 2)
            defer { lab.close() }
            let got = lab.readInBackground(reads: 1, chunk: 1000)
            let read = try lab.nextRead()
            if extra {
                try lab.answer(MediaRead(offset: read.offset, length: read.length + 1))
            } else {
                // An answer at an offset nobody asked for (the read ahead is taken off the channel first).
                _ = try lab.nextRead()
                try lab.answer(MediaRead(offset: 500_000, length: 10))
            }
            XCTAssertThrowsError(try got.wait())
            XCTAssertNotNil(lab.channelError)
        }
    }

    func testReadFailedFailsTheWaitingReadWithCastdsReason() throws {
        let lab = try Fixtures.Lab(readsInFlight: 3)
        defer { lab.close() }
        let got = lab.readInBackground(reads: 1, chunk: 1000)
        _ = try lab.nextRead()
        try lab.castd.send(.readFailed("the sender was lost"))
        XCTAssertThrowsError(try got.wait()) { error in
            XCTAssertEqual("\(error)", "the sender was lost")
        }
        XCTAssertNil(lab.channelError)
    }

    /// A waiting read's answer is not pushed out of the slots by the answers after it, however late the read's
    /// thread runs (on a loaded machine it was, and the read waited for ever for an answer castd had sent).
    func testTheAnswerAReadWaitsForIsNotPushedOutByLaterOnes() throws {
        let lab = try Fixtures.Lab(readsInFlight: 4)
        defer { lab.close() }
        let next = DispatchSemaphore(value: 0)
        let got = lab.readInBackground(reads: 2, chunk: 1000, before: { if $0 == 1 { next.wait() } })
        let asked = try (0..<4).map { _ in try lab.nextRead() }
        XCTAssertEqual(asked.map(\.offset), [0, 1000, 2000, 3000])
        try lab.answerDirectly(asked[0], complete: true)
        // castd answers the read at 1000 with 500 bytes (where its cache's range ends), and that answer is being
        // received (into a slot: nobody waits for it yet) when the read at 1000 begins: it asks for nothing there,
        // and for the gap after the short answer.
        try lab.answerDirectly(MediaRead(offset: 1000, length: 500), complete: false)
        next.signal()
        let ahead = try (0..<2).map { _ in try lab.nextRead() }
        XCTAssertEqual(ahead.map(\.offset), [1500, 2500])
        // The answer arrives, and at once the four after it, before the read's thread has run: the last one needs a
        // slot while every slot holds an answer.
        lab.source.received(complete: true)
        for read in [asked[2], asked[3]] + ahead { try lab.answerDirectly(read, complete: true) }
        XCTAssertEqual(try got.wait(), Array(Fixtures.bytes[..<1500]))
    }

    func testAStreamIsReadOneRangeAtATime() throws {
        let lab = try Fixtures.Lab(readsInFlight: 3, seekable: false)
        defer { lab.close() }
        let got = lab.readInBackground(reads: 2, chunk: 1000)
        let first = try lab.nextRead()
        XCTAssertFalse(lab.hasMoreReads(), "a stream's next offset is known only from the answer")
        try lab.answer(MediaRead(offset: 0, length: 600))
        let second = try lab.nextRead()
        XCTAssertEqual(first.offset, 0)
        XCTAssertEqual(second.offset, 600)
        try lab.answer(second)
        XCTAssertEqual(try got.wait(), Array(Fixtures.bytes[..<1600]))
    }

    /// A stream's next range is asked for as soon as a read took the bytes before it, not when the next read begins:
    /// castd and the sender hold a read while the caller decodes, so a live stream's next bytes come the moment they
    /// exist (issue 32).
    func testAStreamsNextRangeIsAskedForAsSoonAsAReadTookItsBytes() throws {
        let lab = try Fixtures.Lab(readsInFlight: ChannelSource.sessionReadsInFlight, seekable: false)
        defer { lab.close() }
        let got = lab.readInBackground(reads: 1, chunk: 1000)
        let first = try lab.nextRead()
        XCTAssertEqual(first, MediaRead(offset: 0, length: 1000))
        try lab.answer(MediaRead(offset: 0, length: 600))
        XCTAssertEqual(try got.wait(), Array(Fixtures.bytes[..<600]))
        // No read is running now, and the next range is asked for already, once.
        XCTAssertTrue(lab.hasMoreReads(), "the stream's next range was not asked for")
        XCTAssertEqual(try lab.nextRead(), MediaRead(offset: 600, length: 1000))
        XCTAssertFalse(lab.hasMoreReads())
        // The next read takes that answer.
        let next = lab.readInBackground(reads: 1, chunk: 1000)
        try lab.answer(MediaRead(offset: 600, length: 1000))
        XCTAssertEqual(try next.wait(), Array(Fixtures.bytes[600..<1600]))
    }
}

private enum Fixtures {
    static let bytes = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }

    /// A worker's ChannelSource with its channel reader, and castd's end of the channel in the test's hands.
    final class Lab: @unchecked Sendable {
        // Invariant: `error` is guarded by `lock`; the rest never changes after init.
        let source: ChannelSource
        let castd: WorkerChannel
        let worker: WorkerChannel
        private let lock = NSLock()
        private var error: String?

        init(readsInFlight: Int, seekable: Bool = true) throws {
            let (one, other) = try WorkerChannel.socketPair()
            castd = WorkerChannel(fd: one, incoming: WorkerMessage.maximumFromWorker, decode: WorkerMessage.fromWorker)
            worker = WorkerChannel(fd: other, incoming: WorkerMessage.maximumToWorker, decode: WorkerMessage.fromCastd)
            castd.setReceiveTimeout(seconds: 10)
            source = ChannelSource(
                channel: worker,
                media: WorkerStart.Media(size: seekable ? Int64(bytes.count) : nil, seekable: seekable, nameHint: nil),
                readsInFlight: readsInFlight)
            // The worker's channel reader, as SessionWorker runs it.
            let thread = Thread { [source, worker, self] in
                while true {
                    do {
                        guard let message = try worker.receive(dataInto: source) else { break }
                        if case .readFailed = message { source.deliver(message) }
                    } catch {
                        lock.withLock { self.error = "\(error)" }
                        break
                    }
                }
                source.cancel()
            }
            thread.start()
        }

        var channelError: String? { lock.withLock { error } }

        /// The next read the worker sent.
        func nextRead() throws -> MediaRead {
            guard case .read(let read)? = try castd.receive() else { throw WorkerFailure("no read came") }
            return read
        }

        /// Whether another read comes within 0.2 s.
        func hasMoreReads() -> Bool {
            var poll = pollfd(fd: castd.fd, events: Int16(POLLIN), revents: 0)
            return Glibc.poll(&poll, 1, 200) > 0
        }

        /// Answers `read` with the fixture's bytes, as castd's media server does.
        func answer(_ read: MediaRead) throws {
            let start = Int(read.offset)
            let end = min(start + read.length, bytes.count)
            try bytes[start..<end].withUnsafeBytes { try castd.sendData(offset: read.offset, bytes: $0) }
        }

        /// Answers `read` as the channel's reader would receive it, without the channel: the bytes go where the
        /// source says; `complete` false leaves the answer being received (call `source.received` later).
        func answerDirectly(_ read: MediaRead, complete: Bool) throws {
            let start = Int(read.offset)
            let end = min(start + read.length, bytes.count)
            let target = try source.destination(offset: read.offset, count: end - start)
            bytes[start..<end].withUnsafeBytes { target.copyMemory(from: $0) }
            if complete { source.received(complete: true) }
        }

        /// `reads` reads of `chunk` bytes on a thread of their own, as the read-ahead's reader makes them; `before`
        /// runs before each (told its number).
        func readInBackground(reads: Int, chunk: Int, before: @escaping @Sendable (Int) -> Void = { _ in }) -> Outcome {
            let outcome = Outcome()
            let thread = Thread { [source] in
                var got: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: chunk)
                do {
                    for number in 0..<reads {
                        before(number)
                        let count = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
                        got += buffer[..<count]
                    }
                    outcome.finish(.success(got))
                } catch {
                    outcome.finish(.failure(error))
                }
            }
            thread.start()
            return outcome
        }

        func close() {
            castd.shutdown()
            source.cancel()
        }
    }

    /// What a background read came to.
    final class Outcome: @unchecked Sendable {
        // Invariant: `result` is guarded by `done`'s lock.
        private let done = NSCondition()
        private var result: Result<[UInt8], any Error>?

        func finish(_ result: Result<[UInt8], any Error>) {
            done.withLock {
                self.result = result
                done.broadcast()
            }
        }

        /// The bytes read, or the failure; fails the test's wait after 10 s (a hang).
        func wait() throws -> [UInt8] {
            let deadline = Date().addingTimeInterval(10)
            return try done.withLock {
                while result == nil {
                    guard done.wait(until: deadline) else { throw WorkerFailure("the read hung") }
                }
                return try result!.get()
            }
        }
    }
}
