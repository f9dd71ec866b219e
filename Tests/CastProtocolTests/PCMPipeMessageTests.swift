import XCTest

@testable import CastProtocol

final class PCMPipeMessageTests: XCTestCase {
    func testEveryMessageSurvivesItsFrame() throws {
        let messages: [PCMPipeMessage] = [
            .opened(duration: 12.5), .opened(duration: nil), .read(frames: 352),
            .read(frames: PCMPipeMessage.maximumFrames),
            .seek(seconds: 0), .seek(seconds: 61.25), .samples([]), .samples([0, -1, .max, .min]), .seeked,
            .failed("no audio stream"),
        ]
        for message in messages {
            let frame = message.frame
            XCTAssertLessThanOrEqual(frame.encoded().count - Frame.headerSize, PCMPipeMessage.maximumFrameLength)
            XCTAssertEqual(try PCMPipeMessage(frame), message)
        }
        XCTAssertEqual(PCMPipeMessage.samples([0x0102]).frame.payload, [0x02, 0x01], "little-endian samples")
    }

    func testBadFramesAreRefused() {
        let bad: [Frame] = [
            Frame(type: 0x00, payload: []),
            Frame(type: 0x72, payload: [0, 0, 0, 0]),  // read of 0 frames
            Frame(type: 0x72, payload: [0xFF, 0xFF, 0, 0]),  // more than the most
            Frame(type: 0x72, payload: [1, 0]),
            Frame(type: 0x73, payload: PCMPipeMessage.seek(seconds: 1).frame.payload.dropLast() + [0xFF]),  // negative
            Frame(type: 0x73, payload: Array((-Double.infinity).bitPattern.littleEndianBytes)),
            Frame(type: 0x6F, payload: Array(Double.nan.bitPattern.littleEndianBytes)),
            Frame(type: 0x70, payload: [1, 2, 3]),  // not whole frames
            Frame(type: 0x6B, payload: [1]),
            Frame(type: 0x65, payload: [UInt8](repeating: 0x41, count: PCMPipeMessage.maximumTextLength + 1)),
        ]
        for frame in bad {
            XCTAssertThrowsError(try PCMPipeMessage(frame), "\(frame)")
        }
    }
}

extension UInt64 {
    fileprivate var littleEndianBytes: [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: self >> ($0 * 8)) } }
}
