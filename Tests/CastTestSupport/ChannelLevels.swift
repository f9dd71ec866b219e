public import Foundation

/// Interleaved S16_LE audio as captured from ALSA (`castcapture`, or made by `ffmpeg -f s16le`), measured per channel.
public struct ChannelLevels {
    public let samples: [Int16]
    public let channels: Int

    public init(_ data: Data, channels: Int) {
        samples = data.withUnsafeBytes { raw in raw.bindMemory(to: Int16.self).map { Int16(littleEndian: $0) } }
        self.channels = channels
    }

    public var frames: Int { samples.count / channels }

    /// The root mean square of one channel, in S16 units.
    public func rms(channel: Int) -> Double {
        guard frames > 0 else { return 0 }
        var sum = 0.0
        for i in stride(from: channel, to: frames * channels, by: channels) {
            sum += Double(samples[i]) * Double(samples[i])
        }
        return (sum / Double(frames)).squareRoot()
    }

    /// How much louder (dB) one channel is than the same channel of `other`; -infinity when this one is silent.
    public func decibels(channel: Int, relativeTo other: ChannelLevels) -> Double {
        20 * log10(rms(channel: channel) / max(other.rms(channel: channel), 1e-9))
    }

    /// Every channel's RMS, "2712/2712".
    public var rmsList: String {
        (0..<channels).map { String(format: "%.0f", rms(channel: $0)) }.joined(separator: "/")
    }

    /// "N frames, RMS 2712/2712".
    public var summary: String { "\(frames) frames, RMS \(rmsList)" }
}
