/// The UDP packets of an RAOP stream (AirPlay 1), all RTP-shaped: byte 0 is `0x80` (version 2; `0x90` adds the
/// extension bit a sync packet uses to say "first after a start or flush"), byte 1 is the payload type with the
/// marker bit (`0x80`) usually set.
///
/// | type | name | direction | port | size |
/// |---|---|---|---|---|
/// | `0x60` | audio (L16 big-endian stereo, 352 frames) | to the speaker | server | 12 + 1408 |
/// | `0x54` | sync | to the speaker | control | 20 |
/// | `0x52` | timing request | from the speaker | our timing port | 32 |
/// | `0x53` | timing reply | to the speaker | its timing port | 32 |
/// | `0x55` | resend request | from the speaker | our control port | 8 |
///
/// Encoders write what shairport-sync's `rtp.c` reads; `decode` accepts exactly these shapes and throws
/// `RAOPError.malformedPacket` for anything else, whatever its length or content.
public enum SpeakerPacket: Sendable, Equatable {
    /// Audio: `sequence` and `timestamp` (in frames), the stream's `ssrc`, `marker` on the first packet of a run,
    /// and the payload (big-endian samples, undecoded).
    case audio(sequence: UInt16, timestamp: UInt32, ssrc: UInt32, marker: Bool, payload: [UInt8])
    /// Sync: the frame `timestamp` plays at our time `time`; `timestampLessLatency` is `timestamp` minus the
    /// latency we ask for; `first` after a start or a flush.
    case sync(timestampLessLatency: UInt32, time: NTPTime, timestamp: UInt32, first: Bool)
    /// The speaker asks for our time; `sent` is its own clock when it sent the request.
    case timingRequest(sequence: UInt16, sent: NTPTime)
    /// A timing answer: `origin` echoes the request's `sent`; `received` and `sent` are the answerer's clock.
    case timingReply(sequence: UInt16, origin: NTPTime, received: NTPTime, sent: NTPTime)
    /// The speaker missed `count` audio packets from `first` on.
    case resendRequest(sequence: UInt16, first: UInt16, count: UInt16)

    /// Frames in one audio packet (AirPlay 1's fixed packet size).
    public static let framesPerPacket = 352
    /// Bytes of audio payload in one packet: 352 frames × 2 channels × 2 bytes.
    public static let audioPayloadBytes = framesPerPacket * 4
    /// The RTP payload type of audio.
    public static let audioType: UInt8 = 0x60
    /// The payload types of the other packets (without the marker bit).
    public static let syncType: UInt8 = 0x54
    public static let timingRequestType: UInt8 = 0x52
    public static let timingReplyType: UInt8 = 0x53
    public static let resendRequestType: UInt8 = 0x55

    // MARK: Encoding

    /// The bytes on the wire.
    public var encoded: [UInt8] {
        var out: [UInt8] = []
        switch self {
        case .audio(let sequence, let timestamp, let ssrc, let marker, let payload):
            out.reserveCapacity(12 + payload.count)
            out += [0x80, Self.audioType | (marker ? 0x80 : 0)]
            out.appendBigEndian(sequence)
            out.appendBigEndian(timestamp)
            out.appendBigEndian(ssrc)
            out += payload
        case .sync(let lessLatency, let time, let timestamp, let first):
            out += [first ? 0x90 : 0x80, 0x80 | Self.syncType, 0x00, 0x07]
            out.appendBigEndian(lessLatency)
            out.appendBigEndian(time.rawValue)
            out.appendBigEndian(timestamp)
        case .timingRequest(let sequence, let sent):
            out += [0x80, 0x80 | Self.timingRequestType]
            out.appendBigEndian(sequence)
            out += [UInt8](repeating: 0, count: 20)
            out.appendBigEndian(sent.rawValue)
        case .timingReply(let sequence, let origin, let received, let sent):
            out += [0x80, 0x80 | Self.timingReplyType]
            out.appendBigEndian(sequence)
            out += [0, 0, 0, 0]
            out.appendBigEndian(origin.rawValue)
            out.appendBigEndian(received.rawValue)
            out.appendBigEndian(sent.rawValue)
        case .resendRequest(let sequence, let first, let count):
            out += [0x80, 0x80 | Self.resendRequestType]
            out.appendBigEndian(sequence)
            out.appendBigEndian(first)
            out.appendBigEndian(count)
        }
        return out
    }

    /// An audio packet of interleaved stereo samples in host order, written big-endian (L16). Fewer than 352
    /// frames are padded with silence: the speaker expects whole packets.
    public static func audio(
        sequence: UInt16, timestamp: UInt32, ssrc: UInt32, marker: Bool, samples: UnsafeBufferPointer<Int16>
    ) -> [UInt8] {
        precondition(samples.count <= framesPerPacket * 2, "more samples than one packet holds")
        var out = [UInt8](repeating: 0, count: 12 + audioPayloadBytes)
        out[0] = 0x80
        out[1] = audioType | (marker ? 0x80 : 0)
        out[2] = UInt8(sequence >> 8)
        out[3] = UInt8(truncatingIfNeeded: sequence)
        for (i, shift) in [24, 16, 8, 0].enumerated() {
            out[4 + i] = UInt8(truncatingIfNeeded: timestamp >> UInt32(shift))
            out[8 + i] = UInt8(truncatingIfNeeded: ssrc >> UInt32(shift))
        }
        for (i, sample) in samples.enumerated() {
            let bits = UInt16(bitPattern: sample)
            out[12 + 2 * i] = UInt8(bits >> 8)
            out[13 + 2 * i] = UInt8(truncatingIfNeeded: bits)
        }
        return out
    }

    // MARK: Decoding

    /// The packet in `bytes`.
    /// - Throws: `RAOPError` `.malformedPacket` for a wrong version, an unknown type or a wrong length.
    public static func decode(_ bytes: [UInt8]) throws(RAOPError) -> SpeakerPacket {
        guard bytes.count >= 4 else { throw malformed("a packet of \(bytes.count) bytes") }
        guard bytes[0] & 0xC0 == 0x80 else { throw malformed("RTP version \(bytes[0] >> 6), not 2") }
        let type = bytes[1] & 0x7F
        let sequence = bytes.bigEndianUInt16(at: 2)
        switch type {
        case audioType:
            guard bytes.count >= 12, bytes[0] & 0x2F == 0 else { throw malformed("an audio packet with a bad header") }
            guard (bytes.count - 12) % 4 == 0, bytes.count - 12 <= audioPayloadBytes else {
                throw malformed("an audio payload of \(bytes.count - 12) bytes")
            }
            return .audio(
                sequence: sequence, timestamp: bytes.bigEndianUInt32(at: 4), ssrc: bytes.bigEndianUInt32(at: 8),
                marker: bytes[1] & 0x80 != 0, payload: Array(bytes[12...]))
        case syncType:
            guard bytes.count == 20 else { throw malformed("a sync packet of \(bytes.count) bytes") }
            return .sync(
                timestampLessLatency: bytes.bigEndianUInt32(at: 4),
                time: NTPTime(rawValue: bytes.bigEndianUInt64(at: 8)),
                timestamp: bytes.bigEndianUInt32(at: 16), first: bytes[0] & 0x10 != 0)
        case timingRequestType:
            guard bytes.count == 32 else { throw malformed("a timing request of \(bytes.count) bytes") }
            return .timingRequest(sequence: sequence, sent: NTPTime(rawValue: bytes.bigEndianUInt64(at: 24)))
        case timingReplyType:
            guard bytes.count == 32 else { throw malformed("a timing reply of \(bytes.count) bytes") }
            return .timingReply(
                sequence: sequence, origin: NTPTime(rawValue: bytes.bigEndianUInt64(at: 8)),
                received: NTPTime(rawValue: bytes.bigEndianUInt64(at: 16)),
                sent: NTPTime(rawValue: bytes.bigEndianUInt64(at: 24)))
        case resendRequestType:
            guard bytes.count == 8 else { throw malformed("a resend request of \(bytes.count) bytes") }
            return .resendRequest(
                sequence: sequence, first: bytes.bigEndianUInt16(at: 4), count: bytes.bigEndianUInt16(at: 6))
        default:
            throw malformed("an RTP packet of unknown type 0x\(String(type, radix: 16))")
        }
    }

    /// The answer to a timing request: its `sent` time echoed as our origin, with the times we received it and
    /// answer it.
    public static func reply(to request: SpeakerPacket, received: NTPTime, sent: NTPTime) -> SpeakerPacket? {
        guard case .timingRequest(let sequence, let theirs) = request else { return nil }
        return .timingReply(sequence: sequence, origin: theirs, received: received, sent: sent)
    }

    private static func malformed(_ what: String) -> RAOPError {
        RAOPError(.malformedPacket, "the speaker sent \(what)")
    }
}

extension [UInt8] {
    fileprivate mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        let big = value.bigEndian
        Swift.withUnsafeBytes(of: big) { append(contentsOf: $0) }
    }

    fileprivate func bigEndianUInt16(at offset: Int) -> UInt16 {
        UInt16(self[offset]) << 8 | UInt16(self[offset + 1])
    }

    fileprivate func bigEndianUInt32(at offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 << 8 | UInt32(self[offset + $1]) }
    }

    fileprivate func bigEndianUInt64(at offset: Int) -> UInt64 {
        (0..<8).reduce(0) { $0 << 8 | UInt64(self[offset + $1]) }
    }
}
