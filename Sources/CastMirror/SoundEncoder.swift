internal import CFFmpeg
public import CastProtocol

/// Compresses the sender's sound (`SoundCapture`'s 10 ms pieces, 48 kHz S16) to Opus for `cast mirror --audio`:
/// libopus through libavcodec, 10 ms packets, `lowdelay` (the CELT layer only: 2.5 ms of look-ahead), 128 kbit/s
/// for stereo (a tenth of the PCM's 1.5 Mbit/s). One packet comes out for each piece that goes in, stamped with the
/// capture time of the first sample it decodes to: the piece's, less the encoder's look-ahead (the decoder's first
/// samples are the look-ahead's padding; the receiver plays every sample, so the stamp moves instead).
///
/// Thread-safety: one thread (cast-mirror's sound thread) uses it.
public final class SoundEncoder {
    private let encoder: EncoderHandles
    private let channels: Int
    /// The look-ahead in microseconds: what the stamps move back by.
    private let lookAhead: UInt64
    private var samplesIn: Int64 = 0

    /// An encoder for `channels` (1 or 2) at 48 kHz, pieces of `pieceFrames` (480: 10 ms).
    /// - Throws: `MirrorError` when this FFmpeg has no libopus encoder or it does not open.
    public init(channels: Int, pieceFrames: Int) throws(MirrorError) {
        guard let codec = avcodec_find_encoder_by_name("libopus") else {
            throw MirrorError(
                "this FFmpeg has no libopus encoder: send the sound uncompressed (--audio-codec pcm)", usage: true)
        }
        guard let context = avcodec_alloc_context3(codec) else { throw MirrorError("out of memory") }
        context.pointee.sample_rate = Int32(MirrorOpusSound.rate)
        context.pointee.sample_fmt = AV_SAMPLE_FMT_S16
        av_channel_layout_default(&context.pointee.ch_layout, Int32(channels))
        context.pointee.bit_rate = Int64(64_000 * channels)
        context.pointee.time_base = AVRational(num: 1, den: Int32(MirrorOpusSound.rate))
        av_opt_set(context.pointee.priv_data, "application", "lowdelay", 0)
        av_opt_set(context.pointee.priv_data, "frame_duration", "\(pieceFrames * 1000 / MirrorOpusSound.rate)", 0)
        let opened = avcodec_open2(context, codec, nil)
        guard opened >= 0, Int(context.pointee.frame_size) == pieceFrames else {
            EncoderHandles.free(context)
            throw MirrorError(
                "libopus did not open for \(pieceFrames)-frame packets (\(EncoderHandles.message(opened)))")
        }
        encoder = try EncoderHandles(context, name: "libopus")
        self.channels = channels
        lookAhead = UInt64(max(context.pointee.initial_padding, 0)) * 1_000_000 / UInt64(MirrorOpusSound.rate)
        let frame = encoder.frame
        frame.pointee.format = AV_SAMPLE_FMT_S16.rawValue
        frame.pointee.nb_samples = Int32(pieceFrames)
        frame.pointee.sample_rate = Int32(MirrorOpusSound.rate)
        av_channel_layout_default(&frame.pointee.ch_layout, Int32(channels))
        guard av_frame_get_buffer(frame, 0) >= 0 else { throw MirrorError("out of memory for sound") }
    }

    /// Encodes `piece` (its frames exactly the piece size given at init), captured at `captured` (microseconds), and
    /// hands each packet that comes out to `unit` with its capture time.
    /// - Throws: `MirrorError` for a piece of another shape, or when libopus fails.
    public func encode(_ piece: MirrorSound, captured: UInt64, _ unit: (UInt64, MirrorOpusSound) -> Void) throws {
        let frame = encoder.frame
        guard piece.channels == channels, piece.frames == Int(frame.pointee.nb_samples),
            av_frame_make_writable(frame) >= 0, let data = frame.pointee.data.0
        else { throw MirrorError("a piece of sound the Opus encoder does not take") }
        piece.samples.withUnsafeBytes { data.update(from: $0.bindMemory(to: UInt8.self).baseAddress!, count: $0.count) }
        frame.pointee.pts = samplesIn
        samplesIn += Int64(piece.frames)
        let stamp = captured > lookAhead ? captured - lookAhead : 0
        try encoder.encodeFrame { packet in
            let bytes = Array(UnsafeRawBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
            if let sound = MirrorOpusSound(channels: channels, packet: bytes) { unit(stamp, sound) }
        }
    }
}
