/// A piece of the sender's sound in a `mirror` session compressed with Opus (RFC 6716): a sound unit (`MirrorSound`'s
/// `magic`) in format 2, `cast mirror --audio PCM`'s default (`--audio-codec opus`). The unit's capture time is that
/// of the first sample the packet decodes to, on the pictures' clock.
///
/// Layout: `MirrorSound.magic` (4 bytes); the format (1 byte: 2); the channel count (1 byte, 1...2); the rate (UInt32
/// big-endian: 48000, Opus's); then one Opus packet of 1...`maximumPacketLength` bytes (2.5 to 120 ms of sound;
/// the sender sends 10 ms a packet). docs/protocol.md, "The mirror session".
public struct MirrorOpusSound: Sendable, Equatable {
    /// The format byte of an Opus unit.
    public static let format = UInt8(2)
    /// The only rate: Opus decodes to 48 kHz.
    public static let rate = 48000
    /// The longest packet: 120 ms of the highest rate Opus codes (510 kbit/s) is 7650 bytes.
    public static let maximumPacketLength = 8000

    /// Channels, 1...2.
    public var channels: Int
    /// One Opus packet.
    public var packet: [UInt8]

    /// A unit; nil when its channel count or packet length is out of bounds.
    public init?(channels: Int, packet: [UInt8]) {
        guard (1...2).contains(channels), (1...Self.maximumPacketLength).contains(packet.count) else { return nil }
        self.channels = channels
        self.packet = packet
    }

    /// The unit's payload.
    public var encoded: [UInt8] {
        var bytes = MirrorSound.magic
        bytes.reserveCapacity(MirrorSound.headerLength + packet.count)
        bytes.append(Self.format)
        bytes.append(UInt8(channels))
        withUnsafeBytes(of: UInt32(Self.rate).bigEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: packet)
        return bytes
    }

    /// Reads an Opus sound unit's payload.
    /// - Throws: `MirrorStream.Malformed` for another format or rate, or a channel count or length out of bounds.
    public init(decoding payload: [UInt8]) throws(MirrorStream.Malformed) {
        guard MirrorSound.isSound(payload), payload.count > MirrorSound.headerLength, payload[4] == Self.format else {
            throw MirrorStream.Malformed(description: "not an Opus sound unit (\(payload.count) bytes)")
        }
        let rate = payload[6..<10].reduce(0) { $0 << 8 | Int($1) }
        guard rate == Self.rate,
            let sound = Self(channels: Int(payload[5]), packet: Array(payload[MirrorSound.headerLength...]))
        else {
            throw MirrorStream.Malformed(
                description: "an Opus sound unit of \(payload.count) bytes, \(payload[5]) channels at \(rate) Hz")
        }
        self = sound
    }
}

/// A sound unit's payload in either format: uncompressed PCM, or an Opus packet for the receiver to decode.
public enum MirrorSoundUnit: Sendable, Equatable {
    case pcm(MirrorSound)
    case opus(MirrorOpusSound)

    /// Reads a sound unit's payload (`MirrorSound.isSound`).
    /// - Throws: `MirrorStream.Malformed` for an unknown format or a unit out of bounds.
    public init(decoding payload: [UInt8]) throws(MirrorStream.Malformed) {
        if payload.count > 4 && payload[4] == MirrorOpusSound.format {
            self = .opus(try MirrorOpusSound(decoding: payload))
        } else {
            self = .pcm(try MirrorSound(decoding: payload))
        }
    }
}
