import CastBase
import CastMedia
import CastProtocol
import Foundation
import Glibc
import XCTest

@testable import CastReceiver

/// A mirror worker's side of the live stream castd pushes, over a real channel (a socket pair), with the test playing
/// castd and the reading thread the mirror thread.
final class PushedStreamSourceTests: XCTestCase {
    func testEachPieceIsReadTheMomentCastdPushedItAndTheWorkerAsksForNothing() throws {
        let lab = try Fixtures.Lab()
        defer { lab.close() }
        // Nothing follows a piece: the read returns with it (the channel's timeout fails a read that waits for more).
        try lab.push(offset: 0, count: 600)
        XCTAssertEqual(try lab.read(), Array(Fixtures.bytes[..<600]))
        try lab.push(offset: 600, count: 1000)
        XCTAssertEqual(try lab.read(), Array(Fixtures.bytes[600..<1600]))
        XCTAssertFalse(lab.workerSentAMessage(), "a pushed stream asks castd for nothing")
    }

    func testAControlBetweenPiecesGoesToThePlayerAndAStopEndsTheRead() throws {
        let lab = try Fixtures.Lab()
        defer { lab.close() }
        try lab.castd.send(.control(PlaybackControl(.volume(0.5))))
        try lab.push(offset: 0, count: 10)
        XCTAssertEqual(try lab.read(), Array(Fixtures.bytes[..<10]))
        XCTAssertEqual(lab.controls, [.volume(0.5)])
        // The player cancels its source on stop (MirrorPlayer.perform): the read waiting for the next piece ends.
        try lab.castd.send(.control(PlaybackControl(.stop)))
        XCTAssertEqual(try lab.read(), [])
        XCTAssertEqual(lab.controls, [.volume(0.5), .stop])
    }

    func testAnEmptyPieceIsTheStreamsEnd() throws {
        let lab = try Fixtures.Lab()
        defer { lab.close() }
        try lab.push(offset: 0, count: 10)
        XCTAssertEqual(try lab.read().count, 10)
        try lab.push(offset: 10, count: 0)
        XCTAssertEqual(try lab.read(), [])
    }

    func testAPieceOutOfPlaceOrCastdsFailureFailsTheRead() throws {
        let skipped = try Fixtures.Lab()
        defer { skipped.close() }
        try skipped.push(offset: 0, count: 10)
        XCTAssertEqual(try skipped.read().count, 10)
        try skipped.push(offset: 20, count: 10)
        XCTAssertThrowsError(try skipped.read()) { error in
            XCTAssertTrue("\(error)".contains("at 20, where the stream is at 10"), "\(error)")
        }
        let failing = try Fixtures.Lab()
        defer { failing.close() }
        try failing.castd.send(.readFailed("the sender was lost"))
        XCTAssertThrowsError(try failing.read()) { error in XCTAssertEqual("\(error)", "the sender was lost") }
        let closed = try Fixtures.Lab()
        closed.castd.shutdown()
        XCTAssertThrowsError(try closed.read()) { error in XCTAssertEqual("\(error)", "castd closed the channel") }
        closed.close()
    }
}

private enum Fixtures {
    static let bytes = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }

    /// A worker's PushedStreamSource, castd's end of the channel in the test's hands; a stop cancels the source, as
    /// the mirror player does.
    final class Lab {
        let source: PushedStreamSource
        let castd: WorkerChannel
        let worker: WorkerChannel
        private let received = Monitor<[PlaybackControl.Action]>([])

        init() throws {
            let (one, other) = try WorkerChannel.socketPair()
            castd = WorkerChannel(fd: one, incoming: WorkerMessage.maximumFromWorker, decode: WorkerMessage.fromWorker)
            worker = WorkerChannel(fd: other, incoming: WorkerMessage.maximumToWorker, decode: WorkerMessage.fromCastd)
            worker.setReceiveTimeout(seconds: 10)
            let cancel = Monitor<PushedStreamSource?>(nil)
            source = PushedStreamSource(channel: worker) { [received] action in
                received.withLock { $0.append(action) }
                if action == .stop { cancel.withLock { $0 }?.cancel() }
            }
            cancel.withLock { $0 = source }
        }

        var controls: [PlaybackControl.Action] { received.withLock { $0 } }

        /// Pushes the fixture's `count` bytes at `offset`, as castd's push does.
        func push(offset: Int, count: Int) throws {
            try bytes[offset..<(offset + count)].withUnsafeBytes {
                try castd.sendData(offset: Int64(offset), bytes: $0)
            }
        }

        /// One read of the source, on this thread.
        func read() throws -> [UInt8] {
            var buffer = [UInt8](repeating: 0, count: MediaRead.maximumLength)
            let count = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
            return Array(buffer[..<count])
        }

        /// Whether the worker sent castd anything within 0.2 s.
        func workerSentAMessage() -> Bool {
            var poll = pollfd(fd: castd.fd, events: Int16(POLLIN), revents: 0)
            return Glibc.poll(&poll, 1, 200) > 0
        }

        func close() {
            castd.shutdown()
            worker.shutdown()
        }
    }
}
