internal import CFFmpeg
import CastProtocol

/// Decodes a mirrored screen's Opus sound (`MirrorOpusSound`, `cast mirror --audio`'s default) to the 16-bit PCM
/// pieces `MirrorSoundOutput` plays: FFmpeg's Opus decoder, one packet in, its samples out at once (Opus has no
/// reordering; each packet decodes alone, a lost one is concealed by the next). Every sample is kept: the sender
/// stamps each packet with the capture time of the first sample it decodes to, the encoder's padding included.
///
/// Thread-safety: used by the mirror thread only.
final class MirrorSoundDecoder {
    private let context: UnsafeMutablePointer<AVCodecContext>
    private let packet = Packet()
    private let frame = Frame()
    /// The channels of the packets it takes (a unit with another count needs a decoder of its own).
    let channels: Int

    /// A decoder for Opus at 48 kHz in `channels` (1...2).
    init(channels: Int) throws {
        guard let codec = avcodec_find_decoder(AV_CODEC_ID_OPUS) else {
            throw MediaError.other("this receiver's FFmpeg has no Opus decoder")
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw MediaError.ffmpeg("avcodec_alloc_context3", status: cast_averror(ENOMEM))
        }
        self.context = context
        self.channels = channels
        context.pointee.sample_rate = Int32(MirrorOpusSound.rate)
        av_channel_layout_default(&context.pointee.ch_layout, Int32(channels))
        _ = try checkFFmpeg("avcodec_open2 (Opus)", avcodec_open2(context, codec, nil))
    }

    deinit {
        var context: UnsafeMutablePointer<AVCodecContext>? = self.context
        avcodec_free_context(&context)
    }

    /// The samples of `sound`'s packet as one piece of S16 PCM (nil for a damaged packet, which is skipped).
    func decode(_ sound: MirrorOpusSound) -> MirrorSound? {
        let packet = packet.pointer
        guard av_new_packet(packet, Int32(sound.packet.count)) >= 0 else { return nil }
        defer { av_packet_unref(packet) }
        sound.packet.withUnsafeBytes { bytes in
            packet.pointee.data.update(from: bytes.bindMemory(to: UInt8.self).baseAddress!, count: bytes.count)
        }
        guard avcodec_send_packet(context, packet) >= 0 else { return nil }
        var samples: [UInt8] = []
        let frame = frame.pointer
        while avcodec_receive_frame(context, frame) >= 0 {
            defer { av_frame_unref(frame) }
            Self.appendS16(frame, channels: channels, to: &samples)
        }
        return samples.isEmpty ? nil : MirrorSound(rate: MirrorOpusSound.rate, channels: channels, samples: samples)
    }

    /// Appends the frame's samples as interleaved S16 little-endian: FFmpeg's Opus decoder gives planar float
    /// (libopus's, interleaved float or S16); other formats give nothing.
    private static func appendS16(_ frame: UnsafeMutablePointer<AVFrame>, channels: Int, to samples: inout [UInt8]) {
        let count = Int(frame.pointee.nb_samples)
        guard count > 0, Int(frame.pointee.ch_layout.nb_channels) == channels else { return }
        let format = AVSampleFormat(rawValue: frame.pointee.format)
        let planes = withUnsafePointer(to: &frame.pointee.data) {
            $0.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 8) {
                Array(UnsafeBufferPointer(start: $0, count: 8))
            }
        }
        samples.reserveCapacity(samples.count + count * channels * 2)
        func append(_ value: Int16) {
            samples.append(UInt8(truncatingIfNeeded: value))
            samples.append(UInt8(truncatingIfNeeded: value >> 8))
        }
        func s16(_ value: Float) -> Int16 { Int16(max(-32768, min(32767, (value * 32768).rounded()))) }
        for index in 0..<count {
            for channel in 0..<channels {
                switch format {
                case AV_SAMPLE_FMT_FLTP:
                    guard let plane = planes[channel] else { return }
                    plane.withMemoryRebound(to: Float.self, capacity: count) { append(s16($0[index])) }
                case AV_SAMPLE_FMT_FLT:
                    guard let plane = planes[0] else { return }
                    plane.withMemoryRebound(to: Float.self, capacity: count * channels) {
                        append(s16($0[index * channels + channel]))
                    }
                case AV_SAMPLE_FMT_S16:
                    guard let plane = planes[0] else { return }
                    plane.withMemoryRebound(to: Int16.self, capacity: count * channels) {
                        append($0[index * channels + channel])
                    }
                default: return
                }
            }
        }
    }
}

/// A sound unit's samples, whichever its format: PCM as it came, Opus through a `MirrorSoundDecoder` (opened with the
/// first Opus unit, again when the channel count changes).
///
/// Thread-safety: a value the mirror thread owns.
struct MirrorSoundUnits {
    private var decoder: MirrorSoundDecoder?
    /// The format of the last unit, for the log: "PCM" or "Opus".
    private(set) var format = "PCM"

    /// The samples of the sound unit `payload`.
    /// - Throws: for a malformed unit, a damaged Opus packet, or no Opus decoder.
    mutating func piece(of payload: [UInt8]) throws -> MirrorSound {
        switch try MirrorSoundUnit(decoding: payload) {
        case .pcm(let sound):
            format = "PCM"
            return sound
        case .opus(let sound):
            format = "Opus"
            if decoder?.channels != sound.channels { decoder = try MirrorSoundDecoder(channels: sound.channels) }
            guard let piece = decoder?.decode(sound) else { throw MediaError.other("a damaged Opus packet") }
            return piece
        }
    }
}
