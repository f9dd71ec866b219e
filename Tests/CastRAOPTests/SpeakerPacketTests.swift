import XCTest

@testable import CastRAOP

final class SpeakerPacketTests: XCTestCase {
    func testAudioPacketIsBigEndianL16AfterAnRTPHeader() {
        let samples: [Int16] = [1, -2, 0x1234, -32768]
        let bytes = samples.withUnsafeBufferPointer {
            SpeakerPacket.audio(sequence: 0x0102, timestamp: 0x0304_0506, ssrc: 0x0708_090A, marker: true, samples: $0)
        }
        XCTAssertEqual(bytes.count, 12 + 1408)
        XCTAssertEqual(Array(bytes[0..<12]), [0x80, 0xE0, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A])
        XCTAssertEqual(Array(bytes[12..<20]), [0x00, 0x01, 0xFF, 0xFE, 0x12, 0x34, 0x80, 0x00])
        XCTAssertTrue(bytes[20...].allSatisfy { $0 == 0 }, "a short packet is padded with silence")
        let unmarked = [Int16]().withUnsafeBufferPointer {
            SpeakerPacket.audio(sequence: 0, timestamp: 0, ssrc: 0, marker: false, samples: $0)
        }
        XCTAssertEqual(unmarked[1], 0x60)
        guard
            case .audio(let sequence, let timestamp, let ssrc, let marker, let payload) = try? SpeakerPacket.decode(
                bytes)
        else { return XCTFail("the audio packet does not decode") }
        XCTAssertEqual([Int(sequence), Int(timestamp), Int(ssrc)], [0x0102, 0x0304_0506, 0x0708_090A])
        XCTAssertTrue(marker)
        XCTAssertEqual(payload.count, 1408)
    }

    func testSyncPacketLayoutAsShairportReadsIt() throws {
        let time = NTPTime(rawValue: 0x1122_3344_5566_7788)
        let first = SpeakerPacket.sync(timestampLessLatency: 100, time: time, timestamp: 77_275, first: true).encoded
        XCTAssertEqual(first.count, 20)
        XCTAssertEqual(Array(first[0..<4]), [0x90, 0xD4, 0x00, 0x07])
        XCTAssertEqual(Array(first[4..<8]), [0, 0, 0, 100])
        XCTAssertEqual(Array(first[8..<16]), [0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88])
        XCTAssertEqual(Array(first[16..<20]), [0x00, 0x01, 0x2D, 0xDB])
        let later = SpeakerPacket.sync(timestampLessLatency: 1, time: time, timestamp: 2, first: false)
        XCTAssertEqual(later.encoded[0], 0x80)
        XCTAssertEqual(try SpeakerPacket.decode(later.encoded), later)
        XCTAssertEqual(
            try SpeakerPacket.decode(first),
            .sync(timestampLessLatency: 100, time: time, timestamp: 77_275, first: true))
    }

    func testTimingRequestFromShairportAndOurReply() throws {
        // shairport-sync's request: 0x80 0xd2, seq 7, 4 zero bytes, then origin/receive/transmit, only transmit set.
        var request: [UInt8] = [0x80, 0xD2, 0x00, 0x07] + [UInt8](repeating: 0, count: 20)
        request += [0, 0, 0, 1, 0x80, 0, 0, 0]
        let decoded = try SpeakerPacket.decode(request)
        XCTAssertEqual(decoded, .timingRequest(sequence: 7, sent: NTPTime(rawValue: 0x1_8000_0000)))
        let reply = try XCTUnwrap(
            SpeakerPacket.reply(to: decoded, received: NTPTime(rawValue: 5), sent: NTPTime(rawValue: 6)))
        let bytes = reply.encoded
        XCTAssertEqual(bytes.count, 32)
        XCTAssertEqual(Array(bytes[0..<8]), [0x80, 0xD3, 0x00, 0x07, 0, 0, 0, 0])
        XCTAssertEqual(Array(bytes[8..<16]), [0, 0, 0, 1, 0x80, 0, 0, 0], "origin echoes the request's transmit time")
        XCTAssertEqual(Array(bytes[16..<24]), [0, 0, 0, 0, 0, 0, 0, 5], "receive time where shairport reads it")
        XCTAssertEqual(Array(bytes[24..<32]), [0, 0, 0, 0, 0, 0, 0, 6], "transmit time where shairport reads it")
        XCTAssertNil(SpeakerPacket.reply(to: reply, received: NTPTime(rawValue: 0), sent: NTPTime(rawValue: 0)))
    }

    func testResendRequestDecodes() throws {
        XCTAssertEqual(
            try SpeakerPacket.decode([0x80, 0xD5, 0x00, 0x01, 0x12, 0x34, 0x00, 0x03]),
            .resendRequest(sequence: 1, first: 0x1234, count: 3))
    }

    func testMalformedPacketsThrow() {
        let bad: [[UInt8]] = [
            [], [0x80], [0x80, 0xD2, 0, 7], [0x40, 0xD2] + [UInt8](repeating: 0, count: 30),
            [0x80, 0xD2] + [UInt8](repeating: 0, count: 31), [0x80, 0xD4] + [UInt8](repeating: 0, count: 17),
            [0x80, 0xD5, 0, 0, 0, 0], [0x80, 0x7F, 0, 0], [0x80, 0x60, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
            [0x80, 0x60] + [UInt8](repeating: 0, count: 10 + 1412),
        ]
        for bytes in bad {
            XCTAssertThrowsError(try SpeakerPacket.decode(bytes), "\(bytes.prefix(4)) (\(bytes.count) bytes)") {
                XCTAssertEqual(($0 as? RAOPError)?.code, .malformedPacket)
            }
        }
    }

    func testNTPTimeConversions() {
        let time = NTPTime(unixNanoseconds: 1_500_000_000)
        XCTAssertEqual(time.seconds, UInt32(NTPTime.unixEpochOffset + 1))
        XCTAssertEqual(time.fraction, 0x8000_0000)
        XCTAssertEqual(time.unixNanoseconds, 1_500_000_000)
        let clock = SpeakerClock(wallNanoseconds: 10_000_000_000, monotonicNanoseconds: 3_000_000_000)
        XCTAssertEqual(clock.ntp(monotonicNanoseconds: 3_250_000_000).unixNanoseconds, 10_250_000_000)
        XCTAssertEqual(NTPTime(unixNanoseconds: -5).rawValue, NTPTime.unixEpochOffset << 32)
    }
}
