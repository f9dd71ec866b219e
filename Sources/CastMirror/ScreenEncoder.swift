internal import CFFmpeg

/// Encodes screen pictures (BGRX) to H.264 for the least delay: libx264 through libavcodec, `ultrafast`,
/// `zerolatency` (no look-ahead, no B-frames: each picture comes out as its access unit at once), intra refresh
/// instead of periodic key frames (no bursts of a whole intra picture after the first), BT.709 limited range
/// (swscale converts the full-range RGB and the stream says so).
///
/// The rate control is a capped constant quality: `crf` (`constantQuality`) with a VBV of about one frame at the bit
/// rate asked. A change that needs more than the cap comes out softer, and the pictures of the unchanged screen that
/// follow sharpen it to the constant quality; the quantiser of each picture (`lastQuantiser`) says when it got
/// there. (An average bit rate instead would remember the bits a large change overspent and hold the quantiser
/// high for seconds after it: the receiver's picture stayed blurred.)
///
/// Thread-safety: one thread uses it.
public final class ScreenEncoder: PictureEncoder {
    public let name = MirrorEncoderChoice.Kind.software.rawValue
    private let encoder: EncoderHandles
    private var context: UnsafeMutablePointer<AVCodecContext> { encoder.context }
    private let converter: ScreenConverter
    private let fps: Int
    /// The bit rate asked of the encoder now, bits per second.
    public private(set) var bitRate: Int
    /// The quantiser of the last picture that came out (0...51, lower is sharper); nil before the first.
    public private(set) var lastQuantiser: Int?
    /// The constant quality asked for (x264's `crf`): what an unchanged screen sharpens to.
    public static let constantQuality = 23
    /// The quantiser at or under which a picture is as sharp as `constantQuality` gives (x264 codes P pictures a
    /// little over the constant quality's quantiser).
    public static let sharpQuantiser = constantQuality + 3

    /// An encoder for `width`×`height` pictures at about `fps` a second, starting at `bitRate` bits per second.
    public init(width: Int, height: Int, fps: Int, bitRate: Int) throws(MirrorError) {
        guard let codec = avcodec_find_encoder_by_name("libx264") else {
            throw MirrorError("this FFmpeg has no libx264 encoder")
        }
        self.fps = fps
        self.bitRate = bitRate
        // RGB as the X server gives it (full range) to BT.709 limited range, as the stream is flagged.
        converter = try ScreenConverter(width: width, height: height, format: AV_PIX_FMT_YUV420P)
        encoder = try EncoderHandles(
            try Self.open(codec, width: converter.width, height: converter.height, fps: fps, bitRate: bitRate),
            name: "libx264")
        try converter.prepare(encoder.frame)
    }

    /// A libx264 context for `width`×`height` (even) pictures, its rate control fresh.
    private static func open(
        _ codec: UnsafePointer<AVCodec>, width: Int, height: Int, fps: Int, bitRate: Int, relaxed: Bool = false
    ) throws(MirrorError) -> UnsafeMutablePointer<AVCodecContext> {
        let context = try EncoderHandles.screenContext(
            codec, width: width, height: height, format: AV_PIX_FMT_YUV420P, fps: fps, keySeconds: 2)
        context.pointee.thread_count = 2
        Self.setRate(context, bitRate: bitRate, fps: relaxed ? 4 : fps)
        av_opt_set(context.pointee.priv_data, "preset", "ultrafast", 0)
        av_opt_set(context.pointee.priv_data, "tune", "zerolatency", 0)
        av_opt_set(context.pointee.priv_data, "crf", "\(Self.constantQuality)", 0)
        // Intra refresh: a column of intra blocks sweeps the picture every `gop_size` frames, no key frame after the
        // first. Sliced threads (zerolatency's): both cores on each picture, no frame of delay per thread.
        av_opt_set(context.pointee.priv_data, "intra-refresh", "1", 0)
        av_opt_set(context.pointee.priv_data, "x264-params", "sliced-threads=1:aud=0:repeat-headers=1", 0)
        let opened = avcodec_open2(context, codec, nil)
        guard opened >= 0 else {
            EncoderHandles.free(context)
            throw MirrorError("libx264 did not open: \(EncoderHandles.message(opened))")
        }
        return context
    }

    /// Starts the stream afresh with the next picture: a key picture at the constant quality, under a new rate
    /// control. After a change cut hard by the cap, libx264's buffer model can stay starved for many seconds at a
    /// picture a second (pictures of skipped blocks at the highest quantiser): the receiver's picture would stay
    /// blurred. Used once the damage stopped, so the key picture costs nothing that waits behind it.
    public func restart(relaxed: Bool) throws(MirrorError) {
        let codec = context.pointee.codec!
        let fresh = try Self.open(
            codec, width: Int(context.pointee.width), height: Int(context.pointee.height), fps: fps, bitRate: bitRate,
            relaxed: relaxed)
        encoder.replaceContext(with: fresh)
        isRelaxed = relaxed
    }

    /// Whether pictures may take a quarter of a second at the bit rate rather than a frame's time: for the pictures
    /// of a still screen that sharpen a change (nothing waits behind them, and a VBV of one frame at a low rate starves
    /// them to a few bytes of skipped blocks each).
    public private(set) var isRelaxed = false

    /// Asks for `bitRate` bits per second, with pictures of at most a frame's time (`relaxed`: a quarter second),
    /// from the next picture on (libx264 reconfigures between pictures).
    public func setBitRate(_ bitRate: Int, relaxed: Bool = false) {
        self.bitRate = bitRate
        isRelaxed = relaxed
        Self.setRate(context, bitRate: bitRate, fps: relaxed ? 4 : fps)
    }

    private static func setRate(_ context: UnsafeMutablePointer<AVCodecContext>, bitRate: Int, fps: Int) {
        // The cap: with `crf` set, libx264 takes `rc_max_rate` and `rc_buffer_size` as the VBV, not `bit_rate`.
        context.pointee.rc_max_rate = Int64(bitRate)
        // A VBV of about one frame: no picture may take much longer than a frame's time to leave.
        context.pointee.rc_buffer_size = Int32(clamping: bitRate / fps)
    }

    /// Encodes the picture at `pixels` (BGRX, `stride` bytes a row, the size given at init) captured at `captured`
    /// (microseconds) and hands each access unit that comes out to `unit` (with zerolatency: exactly one).
    public func encode(
        _ pixels: UnsafeRawPointer, stride: Int, captured: UInt64, _ unit: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let frame = encoder.frame
        try converter.convert(pixels, stride: stride, into: frame)
        frame.pointee.pts = Int64(captured)
        try encoder.encodeFrame { packet in
            lastQuantiser = Self.quantiser(of: packet)
            try unit(UnsafeRawBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
        }
    }

    /// The picture's quantiser from the encoder's statistics (`AV_PKT_DATA_QUALITY_STATS`: a 32-bit little-endian
    /// quality, the quantiser times `FF_QP2LAMBDA`, first).
    private static func quantiser(of packet: UnsafeMutablePointer<AVPacket>) -> Int? {
        var size = 0
        guard let stats = av_packet_get_side_data(packet, AV_PKT_DATA_QUALITY_STATS, &size), size >= 4 else {
            return nil
        }
        let quality = Int(stats[0]) | Int(stats[1]) << 8 | Int(stats[2]) << 16 | Int(stats[3]) << 24
        return quality / Int(FF_QP2LAMBDA)
    }
}
