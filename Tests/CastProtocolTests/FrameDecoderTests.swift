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
        let frames = [Frame(type: 12, payload: Array(0..<200)), Frame(type: 3, payload: []), Frame(type: 7, payload: [1])]
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
