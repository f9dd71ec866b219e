import CastMirror
import CastProtocol
import Foundation
import XCTest

/// The Opus encoder of `cast mirror --audio` (libopus through libavcodec): one packet of 10 ms per piece, about a
/// tenth of the PCM's size, each stamped with its piece's capture time less the encoder's look-ahead.
final class SoundEncoderTests: XCTestCase {
    /// 10 ms of a 440 Hz tone at 48 kHz stereo S16, from frame `start`.
    private func piece(from start: Int) -> MirrorSound {
        var samples: [UInt8] = []
        for frame in start..<start + 480 {
            let value = Int16(12000 * sin(2 * Double.pi * 440 * Double(frame) / 48000))
            for _ in 0..<2 { withUnsafeBytes(of: value.littleEndian) { samples.append(contentsOf: $0) } }
        }
        return MirrorSound(rate: 48000, channels: 2, samples: samples)!
    }

    func testEachPieceBecomesOnePacketStampedBeforeItsCapture() throws {
        let encoder = try SoundEncoder(channels: 2, pieceFrames: 480)
        var packets: [(stamp: UInt64, sound: MirrorOpusSound)] = []
        for index in 0..<100 {
            let captured = UInt64(1_000_000 + index * 10_000)
            try encoder.encode(piece(from: index * 480), captured: captured) { packets.append(($0, $1)) }
            XCTAssertEqual(packets.count, index + 1, "one packet for piece \(index), at once")
        }
        let lookAhead = 1_000_000 - Int(packets[0].stamp)
        // libopus's `lowdelay` looks 2.5 ms ahead (120 frames): the stamps move back by that, no more than 10 ms.
        XCTAssertGreaterThan(lookAhead, 0)
        XCTAssertLessThanOrEqual(lookAhead, 10_000)
        for (index, packet) in packets.enumerated() {
            XCTAssertEqual(Int(packet.stamp), 1_000_000 + index * 10_000 - lookAhead)
            XCTAssertEqual(packet.sound.channels, 2)
            XCTAssertEqual(try MirrorSoundUnit(decoding: packet.sound.encoded), .opus(packet.sound))
        }
        let bytes = packets.reduce(0) { $0 + $1.sound.packet.count }
        // 128 kbit/s is 160 bytes a packet; the PCM was 1920.
        XCTAssertLessThan(bytes, 100 * 1920 / 6, "Opus is far smaller than the samples")
        XCTAssertThrowsError(
            try encoder.encode(MirrorSound(rate: 48000, channels: 2, samples: [0, 0, 0, 0])!, captured: 0) { _, _ in },
            "a piece of another size")
    }
}
