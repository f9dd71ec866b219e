internal import CFFmpeg

/// An FFmpeg encoder as cast-mirror drives one: its opened context (replaced whole when the stream starts afresh), the
/// frame it is given and the packet it hands back, freed together; a frame in, each packet that comes out handed on.
/// `ScreenEncoder` (libx264) and `SoundEncoder` (libopus) each own one.
///
/// Thread-safety: one thread uses it, its owner's.
final class EncoderHandles {
    /// The opened encoder.
    private(set) var context: UnsafeMutablePointer<AVCodecContext>
    /// The frame the owner fills before `encodeFrame`.
    let frame: UnsafeMutablePointer<AVFrame>
    private let packet: UnsafeMutablePointer<AVPacket>
    /// The encoder's name, for errors.
    private let name: String

    /// Takes `context` (opened) over, freeing it when no frame or packet can be had.
    init(_ context: UnsafeMutablePointer<AVCodecContext>, name: String) throws(MirrorError) {
        guard let frame = av_frame_alloc(), let packet = av_packet_alloc() else {
            Self.free(context)
            throw MirrorError("out of memory")
        }
        self.context = context
        self.frame = frame
        self.packet = packet
        self.name = name
    }

    deinit {
        var frame: UnsafeMutablePointer<AVFrame>? = self.frame
        av_frame_free(&frame)
        var packet: UnsafeMutablePointer<AVPacket>? = self.packet
        av_packet_free(&packet)
        Self.free(context)
    }

    /// Frees the context in use and encodes with `fresh` from now on.
    func replaceContext(with fresh: UnsafeMutablePointer<AVCodecContext>) {
        Self.free(context)
        context = fresh
    }

    /// Sends `frame` to the encoder and hands each packet that comes out to `body` (unreferenced after it).
    /// - Throws: `MirrorError` when the encoder fails, or what `body` throws.
    func encodeFrame(_ body: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        var status = avcodec_send_frame(context, frame)
        guard status >= 0 else { throw MirrorError("\(name): \(Self.message(status))") }
        while true {
            status = avcodec_receive_packet(context, packet)
            if status == cast_averror(EAGAIN) || status == cast_averror_eof() { return }
            guard status >= 0 else { throw MirrorError("\(name): \(Self.message(status))") }
            defer { av_packet_unref(packet) }
            try body(packet)
        }
    }

    /// Frees an encoder context that no `EncoderHandles` holds (one that did not open).
    /// A context of `codec` for screen pictures of `width`×`height` in `format`, as both screen encoders open theirs:
    /// microsecond times (each picture's is when it was captured, so the rate control follows the real spacing), about
    /// `fps` a second, no B-frames, a key picture every `keySeconds`, BT.709 limited range.
    static func screenContext(
        _ codec: UnsafePointer<AVCodec>, width: Int, height: Int, format: AVPixelFormat, fps: Int, keySeconds: Int
    ) throws(MirrorError) -> UnsafeMutablePointer<AVCodecContext> {
        guard let context = avcodec_alloc_context3(codec) else { throw MirrorError("out of memory") }
        context.pointee.width = Int32(width)
        context.pointee.height = Int32(height)
        context.pointee.pix_fmt = format
        context.pointee.time_base = AVRational(num: 1, den: 1_000_000)
        context.pointee.framerate = AVRational(num: Int32(fps), den: 1)
        context.pointee.max_b_frames = 0
        context.pointee.gop_size = Int32(fps * keySeconds)
        context.pointee.color_range = AVCOL_RANGE_MPEG
        context.pointee.colorspace = AVCOL_SPC_BT709
        context.pointee.color_primaries = AVCOL_PRI_BT709
        context.pointee.color_trc = AVCOL_TRC_BT709
        return context
    }

    static func free(_ context: UnsafeMutablePointer<AVCodecContext>) {
        var context: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&context)
    }

    /// FFmpeg's text for an AVERROR.
    static func message(_ status: Int32) -> String {
        var text = [CChar](repeating: 0, count: 256)
        _ = av_strerror(status, &text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
