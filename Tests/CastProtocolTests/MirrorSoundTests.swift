import CastProtocol
import XCTest

final class MirrorSoundTests: XCTestCase {
    private enum Fixtures {
        /// 10 ms of 48 kHz stereo, each byte its index.
        static let piece = (0..<480 * 4).map { UInt8(truncatingIfNeeded: $0) }
    }

    func testAUnitTravelsWholeBesidePicturesAndCursors() throws {
        let sound = try XCTUnwrap(MirrorSound(rate: 48000, channels: 2, samples: Fixtures.piece))
        XCTAssertEqual(sound.frames, 480)
        let payload = sound.encoded
        XCTAssertEqual(payload.count, MirrorSound.headerLength + Fixtures.piece.count)
        XCTAssertTrue(MirrorSound.isSound(payload))
        XCTAssertFalse(MirrorCursor.isCursor(payload))
        XCTAssertFalse(MirrorSound.isSound([0, 0, 0, 1, 0x65]), "a picture (Annex B) is not sound")
        XCTAssertEqual(try MirrorSound(decoding: payload), sound)

        // On the stream, between a picture and another: the reader gives it back with its capture time.
        var reader = MirrorStream.Reader()
        let stream =
            MirrorStream.magic + MirrorStream.Unit(captured: 1, payload: [0, 0, 0, 1, 0x65]).encoded
            + MirrorStream.Unit(captured: 2, payload: payload).encoded
        stream.withUnsafeBytes { reader.append($0) }
        XCTAssertEqual(try reader.next()?.captured, 1)
        let unit = try XCTUnwrap(try reader.next())
        XCTAssertEqual(unit.captured, 2)
        XCTAssertEqual(try MirrorSound(decoding: unit.payload), sound)
    }

    func testUnitsOutOfBoundsAreRefused() {
        XCTAssertNil(MirrorSound(rate: 48000, channels: 2, samples: []), "no frames")
        XCTAssertNil(MirrorSound(rate: 48000, channels: 2, samples: [0, 0, 0]), "half a frame")
        XCTAssertNil(MirrorSound(rate: 48000, channels: 3, samples: [UInt8](repeating: 0, count: 6)), "3 channels")
        XCTAssertNil(MirrorSound(rate: 7999, channels: 1, samples: [0, 0]), "a rate below 8 kHz")
        XCTAssertNil(MirrorSound(rate: 96001, channels: 1, samples: [0, 0]), "a rate above 96 kHz")
        XCTAssertNotNil(MirrorSound(rate: 48000, channels: 2, samples: [UInt8](repeating: 0, count: 4800 * 4)))
        XCTAssertNil(
            MirrorSound(rate: 48000, channels: 2, samples: [UInt8](repeating: 0, count: 4801 * 4)), "over 100 ms")

        let good = MirrorSound(rate: 48000, channels: 2, samples: Fixtures.piece)!.encoded
        var otherFormat = good
        otherFormat[4] = 2
        XCTAssertThrowsError(try MirrorSound(decoding: otherFormat), "another format (Opus: MirrorOpusSound)")
        var fast = good
        fast[6..<10] = [0xFF, 0xFF, 0xFF, 0xFF]
        XCTAssertThrowsError(try MirrorSound(decoding: fast), "a rate out of bounds")
        var monoOdd = good
        monoOdd[5] = 0
        XCTAssertThrowsError(try MirrorSound(decoding: monoOdd), "no channels")
        XCTAssertThrowsError(try MirrorSound(decoding: Array(good.prefix(MirrorSound.headerLength))), "no samples")
        XCTAssertThrowsError(try MirrorSound(decoding: Array(good.dropLast())), "half a frame")
    }

    /// Format 2: an Opus packet, read back by `MirrorSoundUnit` beside PCM; out of bounds refused.
    func testAnOpusUnitTravelsWholeAndOutOfBoundsIsRefused() throws {
        let packet = (0..<160).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let sound = try XCTUnwrap(MirrorOpusSound(channels: 2, packet: packet))
        let payload = sound.encoded
        XCTAssertEqual(payload.count, MirrorSound.headerLength + packet.count)
        XCTAssertTrue(MirrorSound.isSound(payload))
        XCTAssertEqual(Array(payload[4..<10]), [2, 2, 0, 0, 0xBB, 0x80], "format 2, stereo, 48000")
        XCTAssertEqual(try MirrorSoundUnit(decoding: payload), .opus(sound))
        let pcm = MirrorSound(rate: 48000, channels: 2, samples: Fixtures.piece)!
        XCTAssertEqual(try MirrorSoundUnit(decoding: pcm.encoded), .pcm(pcm))

        XCTAssertNil(MirrorOpusSound(channels: 2, packet: []), "no packet")
        XCTAssertNil(MirrorOpusSound(channels: 3, packet: packet), "3 channels")
        XCTAssertNil(
            MirrorOpusSound(channels: 1, packet: [UInt8](repeating: 0, count: MirrorOpusSound.maximumPacketLength + 1)),
            "a packet over the longest")
        var otherRate = payload
        otherRate[6..<10] = [0, 0, 0x7D, 0]
        XCTAssertThrowsError(try MirrorSoundUnit(decoding: otherRate), "Opus at 32 kHz")
        var unknown = payload
        unknown[4] = 3
        XCTAssertThrowsError(try MirrorSoundUnit(decoding: unknown), "format 3")
        XCTAssertThrowsError(
            try MirrorSoundUnit(decoding: Array(payload.prefix(MirrorSound.headerLength))), "no packet")
    }
}
