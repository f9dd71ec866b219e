/// A piece of the sender's sound in a `mirror` session (`cast mirror --audio PCM`), sent beside the pictures as a unit
/// of the `MirrorStream` whose payload begins with `magic` (a picture's payload begins with an H.264 start code and a
/// cursor's with "CUR1", so none mix up). The unit's capture time is the time its first sample was captured, on the
/// same clock as the pictures', so that the receiver can play it in line with them.
///
/// Layout: `magic` (4 bytes); the format (1 byte: 1, signed 16-bit little-endian PCM, interleaved; 2 is Opus,
/// `MirrorOpusSound`, and `MirrorSoundUnit` reads either); the channel count
/// (1 byte, 1...2); the rate (UInt32 big-endian, 8000...96000 frames a second); then the samples, 1 to
/// `maximumDuration` of frames. docs/protocol.md, "The mirror session".
public struct MirrorSound: Sendable, Equatable {
    /// The first bytes of a sound unit's payload.
    public static let magic: [UInt8] = Array("SND1".utf8)
    /// The bytes before the samples.
    public static let headerLength = 10
    /// Uncompressed: signed 16-bit little-endian PCM, interleaved.
    public static let pcmS16 = UInt8(1)
    /// The longest piece, in microseconds: a tenth of a second (the sender sends about 10 ms a unit).
    public static let maximumDuration = 100_000
    /// The rates a unit may carry.
    public static let rates = 8000...96000

    /// Frames a second.
    public var rate: Int
    /// Channels, interleaved.
    public var channels: Int
    /// The samples: `frames` × `channels` of Int16, little-endian.
    public var samples: [UInt8]

    /// The number of frames the unit holds.
    public var frames: Int { samples.count / (channels * 2) }

    /// A unit; nil when its rate, channel count or length is out of bounds.
    public init?(rate: Int, channels: Int, samples: [UInt8]) {
        guard Self.rates.contains(rate), (1...2).contains(channels), samples.count % (channels * 2) == 0 else {
            return nil
        }
        let frames = samples.count / (channels * 2)
        guard frames >= 1, frames <= rate * Self.maximumDuration / 1_000_000 else { return nil }
        self.rate = rate
        self.channels = channels
        self.samples = samples
    }

    /// Whether `payload` is a sound unit's (it may still be malformed).
    public static func isSound(_ payload: [UInt8]) -> Bool {
        payload.count >= magic.count && payload[0..<magic.count].elementsEqual(magic)
    }

    /// The unit's payload.
    public var encoded: [UInt8] {
        var bytes = Self.magic
        bytes.reserveCapacity(Self.headerLength + samples.count)
        bytes.append(Self.pcmS16)
        bytes.append(UInt8(channels))
        withUnsafeBytes(of: UInt32(rate).bigEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: samples)
        return bytes
    }

    /// Reads a sound unit's payload.
    /// - Throws: `MirrorStream.Malformed` for another format, or a rate, channel count or length out of bounds.
    public init(decoding payload: [UInt8]) throws(MirrorStream.Malformed) {
        guard Self.isSound(payload), payload.count > Self.headerLength else {
            throw MirrorStream.Malformed(description: "a sound unit of \(payload.count) bytes")
        }
        guard payload[4] == Self.pcmS16 else {
            throw MirrorStream.Malformed(description: "a sound unit in format \(payload[4]) (1 and 2 known)")
        }
        let rate = payload[6..<10].reduce(0) { $0 << 8 | Int($1) }
        guard let sound = Self(rate: rate, channels: Int(payload[5]), samples: Array(payload[Self.headerLength...]))
        else {
            throw MirrorStream.Malformed(
                description: "a sound unit of \(payload.count) bytes, \(payload[5]) channels at \(rate) Hz")
        }
        self = sound
    }
}
