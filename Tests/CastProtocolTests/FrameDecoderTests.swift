import XCTest

@testable import CastProtocol

final class FrameDecoderTests: XCTestCase {
    func testRoundTripOfOneFrame() throws {
        var decoder = FrameDecoder()
        let frame = Frame(type: 7, payload: Array("hello".utf8))
        decoder.feed(frame.encoded())
        XCTAssertEqual(try decoder.nextFrame(), frame)
        XCTAssertNil(try decoder.nextFrame())
        XCTAssertFalse(decoder.hasPartialFrame)
    }

    func testWireLayoutIsBigEndianLengthThenType() {
        let bytes = Frame(type: 5, payload: [0xAA, 0xBB]).encoded()
        XCTAssertEqual(bytes, [0, 0, 0, 3, 5, 0xAA, 0xBB])
    }

    func testFrameArrivingOneByteAtATime() throws {
        var decoder = FrameDecoder()
        let frame = Frame(type: 1, payload: Array(repeating: 0x41, count: 300))
        var decoded: [Frame] = []
        for byte in frame.encoded() {
            XCTAssertTrue(decoded.isEmpty)
            decoder.feed([byte])
            if let f = try decoder.nextFrame() { decoded.append(f) }
        }
        XCTAssertEqual(decoded, [frame])
    }

    func testSeveralFramesInOneRead() throws {
        var decoder = FrameDecoder()
        let frames = (0..<5).map { Frame(type: UInt8($0), payload: Array(repeating: UInt8($0), count: $0)) }
        decoder.feed(frames.flatMap { $0.encoded() })
        var out: [Frame] = []
        while let f = try decoder.nextFrame() { out.append(f) }
        XCTAssertEqual(out, frames)
    }

    func testEmptyPayloadIsAllowedButZeroLengthIsNot() throws {
        var decoder = FrameDecoder()
        decoder.feed(Frame(type: 3, payload: []).encoded())
        XCTAssertEqual(try decoder.nextFrame(), Frame(type: 3, payload: []))
        decoder.feed([0, 0, 0, 0])
        XCTAssertThrowsError(try decoder.nextFrame()) { error in
            XCTAssertEqual((error as? ProtocolError)?.code, .emptyFrame)
        }
    }

    func testTwoGibibyteLengthIsRefusedFromTheHeaderAlone() {
        var decoder = FrameDecoder()
        decoder.feed([0x80, 0x00, 0x00, 0x00])
        XCTAssertThrowsError(try decoder.nextFrame()) { error in
            XCTAssertEqual((error as? ProtocolError)?.code, .frameTooLarge)
        }
    }

    func testLimitIsInclusive() throws {
        var decoder = FrameDecoder(maximumFrameLength: 10)
        decoder.feed(Frame(type: 1, payload: Array(repeating: 0, count: 9)).encoded())
        XCTAssertNotNil(try decoder.nextFrame())
        decoder.feed(Frame(type: 1, payload: Array(repeating: 0, count: 10)).encoded())
        XCTAssertThrowsError(try decoder.nextFrame())
    }

    func testPartialFrameIsVisible() throws {
        var decoder = FrameDecoder()
        decoder.feed([0, 0])
        XCTAssertTrue(decoder.hasPartialFrame)
        XCTAssertNil(try decoder.nextFrame())
        decoder.feed([0, 1, 9])
        XCTAssertEqual(try decoder.nextFrame(), Frame(type: 9, payload: []))
        XCTAssertFalse(decoder.hasPartialFrame)
    }

    /// The borrowing `nextFrame` sees the same frames as the copying one, checks the same limits, and consumes each.
    func testBorrowedFramesAreTheSameFrames() throws {
        let frames = [
            Frame(type: 12, payload: Array(0..<200)), Frame(type: 3, payload: []), Frame(type: 7, payload: [1]),
        ]
        var decoder = FrameDecoder(maximumFrameLength: 300)
        let bytes = frames.flatMap { $0.encoded() }
        bytes.withUnsafeBytes { decoder.feed(UnsafeRawBufferPointer(rebasing: $0[..<10])) }
        XCTAssertNil(try decoder.nextFrame { _, _ in XCTFail("not complete yet") })
        bytes.withUnsafeBytes { decoder.feed(UnsafeRawBufferPointer(rebasing: $0[10...])) }
        var seen: [Frame] = []
        while let frame = try decoder.nextFrame({ type, payload in Frame(type: type, payload: Array(payload)) }) {
            seen.append(frame)
        }
        XCTAssertEqual(seen, frames)
        XCTAssertFalse(decoder.hasPartialFrame)
        var small = FrameDecoder(maximumFrameLength: 100)
        small.feed(frames[0].encoded())
        XCTAssertThrowsError(try small.nextFrame { _, _ in 0 })
    }
}

final class FrameDecoderStreamingTests: XCTestCase {
    /// A caller that moves a large payload into its own memory peeks at the frame's start, takes the header and the
    /// part already buffered, and reads the rest itself; the next frame is decoded as usual.
    func testPeekAtAFrameStartThenTakeItsBody() throws {
        var decoder = FrameDecoder(maximumFrameLength: 1 << 20)
        let payload = (0..<5000).map { UInt8(truncatingIfNeeded: $0) }
        let big = Frame(type: 3, payload: [0, 0, 0, 0, 0, 0, 0, 42] + payload).encoded()
        let next = Frame(type: 9, payload: [1, 2])
        decoder.feed(big[..<5])
        XCTAssertNil(try decoder.peekFrameStart(prefix: 8) { _, _, _ in true }, "the offset is not there yet")
        decoder.feed(big[5..<1000])
        let start = try decoder.peekFrameStart(prefix: 8) { type, length, prefix in
            (type, length, Int64(bigEndian: prefix.loadUnaligned(as: Int64.self)))
        }
        XCTAssertEqual(start?.0, 3)
        XCTAssertEqual(start?.1, 1 + 8 + 5000)
        XCTAssertEqual(start?.2, 42)
        XCTAssertEqual(decoder.take(Frame.headerSize + 1 + 8, into: nil), 13)
        var body = [UInt8](repeating: 0, count: 5000)
        let taken = body.withUnsafeMutableBytes { decoder.take(5000, into: $0) }
        XCTAssertEqual(taken, 1000 - 13)
        XCTAssertEqual(decoder.bufferedCount, 0)
        // The rest as the caller's own read would get it, then the next frame through the decoder.
        body.replaceSubrange(taken..<5000, with: big[1000...])
        XCTAssertEqual(body, payload)
        decoder.feed(next.encoded())
        XCTAssertEqual(try decoder.nextFrame(), next)
    }

    func testPeekChecksTheLengthAsNextFrameDoes() {
        var decoder = FrameDecoder(maximumFrameLength: 100)
        decoder.feed([0, 0, 0, 101, 3])
        XCTAssertThrowsError(try decoder.peekFrameStart(prefix: 8) { _, _, _ in true }) { error in
            XCTAssertEqual((error as? ProtocolError)?.code, .frameTooLarge)
        }
        var empty = FrameDecoder()
        empty.feed([0, 0, 0, 0, 3])
        XCTAssertThrowsError(try empty.peekFrameStart(prefix: 0) { _, _, _ in true })
        // A frame shorter than the prefix shows all it has.
        var short = FrameDecoder()
        short.feed(Frame(type: 5, payload: [7]).encoded())
        XCTAssertEqual(try short.peekFrameStart(prefix: 8) { _, _, prefix in Array(prefix) }, [7])
    }
}
