import CastMedia
import CastProtocol
import CastSecurity
import CastSystem
import CastTestSupport
import Foundation
import Glibc
import XCTest

@testable import CastReceiver

/// castd's reader of served media over a real TLS media connection, with the test playing the sender.
final class RemoteSourceTests: XCTestCase {
    func testReadsAheadAreInFlightAndTheAnswersAreTakenInOrder() throws {
        let lab = try Fixtures.Lab(seekable: true)
        defer { lab.close() }
        let chunk = 64 << 10
        let got = Fixtures.read(lab.source, reads: 3, chunk: chunk)
        let first = try lab.nextRead()
        XCTAssertEqual(first, MediaRead(offset: 0, length: chunk))
        try lab.answer(first)
        // The first answer taken, the next two ranges are asked for before anything else is answered.
        let ahead = [try lab.nextRead(), try lab.nextRead()]
        XCTAssertEqual(ahead, [1, 2].map { MediaRead(offset: Int64($0 * chunk), length: chunk) })
        for read in ahead { try lab.answer(read) }
        XCTAssertEqual(try got.value(), Array(Fixtures.bytes[..<(3 * chunk)]))
    }

    /// A read longer than the range that arrived where it begins is answered whole, from that range and the ones
    /// after it (arrived, or on their way), not short: a short answer made the worker ask for the rest on its own,
    /// behind the reads it had asked ahead (castd answers a worker's reads in order), and wait seconds for bytes castd
    /// had (a stall on a link 1.5 times the film's rate).
    func testAReadLongerThanTheRangeWhereItBeginsIsAnsweredWhole() throws {
        let lab = try Fixtures.Lab(seekable: true)
        defer { lab.close() }
        let first = Fixtures.read(lab.source, reads: 1, chunk: 1000)
        // The read and the two ranges after it, 1000 bytes each, answered.
        for _ in 0..<3 { try lab.answer(try lab.nextRead()) }
        XCTAssertEqual(try first.value(), Array(Fixtures.bytes[..<1000]))
        // 1500 bytes at 1000: two ranges that arrived, the last one in part.
        let longer = try Fixtures.read(lab.source, reads: 1, chunk: 1500).value()
        XCTAssertEqual(longer.count, 1500, "answered whole")
        XCTAssertTrue(longer == Array(Fixtures.bytes[1000..<(1000 + longer.count)]))
        // 2500 more: the rest of the range at 2000, and the ranges after it, asked ahead of the read before.
        let more = Fixtures.read(lab.source, reads: 1, chunk: 2500)
        var asked: [MediaRead] = []
        while (asked.map { $0.offset + Int64($0.length) }.max() ?? 0) < 5000 { asked.append(try lab.nextRead()) }
        for read in asked { try lab.answer(read) }
        let rest = try more.value()
        XCTAssertEqual(rest.count, 2500, "answered whole")
        XCTAssertTrue(rest == Array(Fixtures.bytes[2500..<(2500 + rest.count)]))
    }

    func testAnAnswerOutOfOrderIsRefusedWithAClearError() throws {
        let lab = try Fixtures.Lab(seekable: true)
        defer { lab.close() }
        let got = Fixtures.read(lab.source, reads: 1, chunk: 1000)
        let read = try lab.nextRead()
        try lab.answer(MediaRead(offset: read.offset + 1000, length: 1000))
        XCTAssertThrowsError(try got.value()) { error in
            XCTAssertTrue("\(error)".contains("order of answers"), "\(error)")
        }
        // The connection stays refused: the rest of the refused frame is never taken for the next answer.
        XCTAssertThrowsError(try Fixtures.read(lab.source, reads: 1, chunk: 1000).value()) { error in
            XCTAssertTrue("\(error)".contains("order of answers"), "\(error)")
        }
    }

    func testAnAnswerLongerThanAskedIsRefused() throws {
        let lab = try Fixtures.Lab(seekable: true)
        defer { lab.close() }
        let got = Fixtures.read(lab.source, reads: 1, chunk: 1000)
        let read = try lab.nextRead()
        try lab.answer(MediaRead(offset: read.offset, length: 1001))
        XCTAssertThrowsError(try got.value()) { error in
            XCTAssertTrue("\(error)".contains("1001 bytes answer a read of 1000"), "\(error)")
        }
    }

    func testAnAnswerNobodyAskedForIsRefused() throws {
        // A stream is never read ahead: a second answer to its one read, at a range never asked for, comes where the
        // answer to the next read is due.
        let lab = try Fixtures.Lab(seekable: false)
        defer { lab.close() }
        let got = Fixtures.read(lab.source, reads: 2, chunk: 1000)
        let read = try lab.nextRead()
        try lab.answer(read)
        try lab.answer(MediaRead(offset: 7000, length: 1000))
        XCTAssertThrowsError(try got.value()) { error in
            XCTAssertTrue("\(error)".contains("order of answers"), "\(error)")
        }
    }

    func testTheSendersErrorFailsTheReadAndTheConnectionGoesOn() throws {
        let lab = try Fixtures.Lab(seekable: false)
        defer { lab.close() }
        let failing = Fixtures.read(lab.source, reads: 1, chunk: 1000)
        _ = try lab.nextRead()
        try lab.client.write(
            Message.error(ErrorMessage(code: .mediaUnreadable, message: "gone")).frame().encoded())
        XCTAssertThrowsError(try failing.value()) { error in
            XCTAssertTrue("\(error)".contains("gone"), "\(error)")
        }
        let next = Fixtures.read(lab.source, reads: 1, chunk: 1000)
        try lab.answer(try lab.nextRead())
        XCTAssertEqual(try next.value().count, 1000)
    }

    /// castd asks for a stream's next range as soon as the answer before it arrived, before its reader is handed
    /// those bytes: the sender waits at its pipe and sends the next bytes the moment they exist (issue 32).
    func testAStreamsNextReadIsAskedForWhenTheAnswerBeforeItArrives() throws {
        let lab = try Fixtures.Lab(seekable: false)
        defer { lab.close() }
        let got = Fixtures.read(lab.source, reads: 1, chunk: 1000)
        let first = try lab.nextRead()
        XCTAssertEqual(first, MediaRead(offset: 0, length: 1000))
        try lab.answer(MediaRead(offset: 0, length: 600))
        XCTAssertEqual(try got.value(), Array(Fixtures.bytes[..<600]))
        // No reader waits now, and the next range is asked for already.
        let ahead = try lab.nextRead()
        XCTAssertEqual(ahead, MediaRead(offset: 600, length: 1000))
        try lab.answer(ahead)
        XCTAssertEqual(try Fixtures.read(lab.source, reads: 1, chunk: 1000).value(), Array(Fixtures.bytes[600..<1600]))
    }
}

/// castd pushing a mirror session's live stream to its worker (`MediaReadServer.push`), with the test playing the
/// sender and the worker.
final class MirrorPushTests: XCTestCase {
    func testEachAnswerOfTheSenderGoesToTheWorkerAtOnceWithoutTheWorkerAsking() throws {
        let lab = try Fixtures.Lab(seekable: false)
        defer { lab.close() }
        let (one, other) = try WorkerChannel.socketPair()
        let castd = WorkerChannel(fd: one, incoming: WorkerMessage.maximumFromWorker, decode: WorkerMessage.fromWorker)
        let worker = WorkerChannel(fd: other, incoming: WorkerMessage.maximumToWorker, decode: WorkerMessage.fromCastd)
        defer {
            castd.shutdown()
            worker.shutdown()
        }
        worker.setReceiveTimeout(seconds: 10)
        let source = lab.source
        let pushing = Background { try MediaReadServer.push(source, on: castd) }
        // The sender answers each read with what it has; the worker, which asks for nothing, gets each answer.
        var offset = 0
        for count in [600, 1000] {
            let read = try lab.nextRead()
            XCTAssertEqual(read.offset, Int64(offset))
            try lab.answer(MediaRead(offset: read.offset, length: count))
            guard case .data(let piece)? = try worker.receive() else { return XCTFail("no piece came") }
            XCTAssertEqual(piece.offset, Int64(offset))
            XCTAssertEqual(piece.bytes, Array(Fixtures.bytes[offset..<(offset + count)]))
            offset += count
        }
        // The stream's end (an empty answer) is passed on as an empty piece, and the push is over.
        let last = try lab.nextRead()
        try lab.client.write(Message.mediaData(MediaData(offset: last.offset, bytes: [])).frame().encoded())
        guard case .data(let end)? = try worker.receive() else { return XCTFail("no end came") }
        XCTAssertEqual(end.offset, Int64(offset))
        XCTAssertTrue(end.bytes.isEmpty)
        try pushing.value()
    }
}

private enum Fixtures {
    static let bytes = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
    static let receiver = try! Identity.ephemeral()
    static let sender = try! Identity.ephemeral()

    /// castd's RemoteSource on one end of a TLS connection; the sender's end in the test's hands.
    final class Lab {
        let source: RemoteSource
        let client: TLSConnection
        private var decoder = FrameDecoder()

        init(seekable: Bool) throws {
            let listener = try TCP.listen(host: "127.0.0.1", port: 0)
            defer { Glibc.close(listener.fd) }
            let accepted = Background {
                let (fd, _) = try TCP.accept(listener.fd)
                return try TLSConnection.accept(fd: fd, identity: receiver, handshakeTimeout: .seconds(5))
            }
            let fd = try TCP.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5))
            client = try TLSConnection.connect(fd: fd, identity: sender, handshakeTimeout: .seconds(5))
            let server = try accepted.value()
            source = RemoteSource(
                tls: server,
                descriptor: MediaDescriptor(
                    size: seekable ? Int64(bytes.count) : nil, seekable: seekable, nameHint: nil))
        }

        /// The next `mediaRead` castd sent.
        func nextRead() throws -> MediaRead {
            while true {
                if let frame = try decoder.nextFrame() {
                    guard case .mediaRead(let read) = try Message(frame) else { throw WorkerFailure("not a read") }
                    return read
                }
                let bytes = try client.read(maxCount: 4096, timeout: .seconds(10))
                guard !bytes.isEmpty else { throw WorkerFailure("castd closed the connection") }
                decoder.feed(bytes)
            }
        }

        /// Answers `read` with the fixture's bytes.
        func answer(_ read: MediaRead) throws {
            let start = Int(read.offset)
            let end = min(start + read.length, bytes.count)
            let data = MediaData(offset: read.offset, bytes: Array(bytes[start..<end]))
            try client.write(Message.mediaData(data).frame().encoded())
        }

        func close() {
            client.close()
            source.close()
        }
    }

    /// `reads` reads of `chunk` bytes on a thread of their own, as castd's media server makes them.
    static func read(_ source: RemoteSource, reads: Int, chunk: Int) -> Background<[UInt8]> {
        Background {
            var got: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: chunk)
            for _ in 0..<reads {
                let count = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
                got += buffer[..<count]
            }
            return got
        }
    }

}
