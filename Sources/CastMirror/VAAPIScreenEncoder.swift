internal import CFFmpeg

/// Encodes screen pictures (BGRX) to H.264 on the GPU through VA-API (`h264_vaapi`), as FFmpeg's
/// doc/examples/vaapi_encode.c does: a pool of VA surfaces in NV12 of the picture's size (a hw frames context), each
/// picture converted by swscale to NV12 in memory (BT.709 limited range, as `ScreenEncoder`), uploaded to a surface
/// and encoded with the least delay: no B-frames, one picture in flight (`async_depth` 1), VBR capped at the bit rate
/// asked with a VBV of about one frame. h264_vaapi offers no intra refresh on most drivers: a long GOP (an IDR every
/// ten seconds) and a key picture when the stream starts afresh (`restart`).
///
/// VA-API takes its rate control when the encoder opens, not between pictures: a new bit rate reopens it (a key
/// picture), so only a drop or a rise of a quarter or more does (`reopens`); `relaxed` is remembered but not applied
/// (each reopen would cost a key picture). The quantiser of each picture is not reported (`lastQuantiser` is nil).
///
/// Written to FFmpeg's example and checked here only as far as a machine without a GPU goes (the probe's failures).
///
/// Thread-safety: one thread uses it.
public final class VAAPIScreenEncoder: PictureEncoder {
    public let name = MirrorEncoderChoice.Kind.vaapi.rawValue
    /// The device the surfaces and the encoder are on.
    let device: VAAPIDevice
    private let surfaces: HardwareFrames
    private let encoder: EncoderHandles
    private let converter: NV12Converter
    private let fps: Int
    public private(set) var bitRate: Int
    public private(set) var isRelaxed = false
    public var lastQuantiser: Int? { nil }

    /// An encoder on `device` for `width`×`height` pictures at about `fps` a second, starting at `bitRate` bits per
    /// second: the second half of the probe (the encoder opens with the picture's size, or says why not).
    public init(device: VAAPIDevice, width: Int, height: Int, fps: Int, bitRate: Int) throws(MirrorError) {
        guard let codec = avcodec_find_encoder_by_name(MirrorEncoderChoice.Kind.vaapi.rawValue) else {
            throw MirrorError("this FFmpeg has no h264_vaapi encoder")
        }
        // Even sizes: 4:2:0 halves both.
        let evenWidth = width & ~1
        let evenHeight = height & ~1
        self.device = device
        self.fps = fps
        self.bitRate = bitRate
        surfaces = try HardwareFrames(device: device, width: evenWidth, height: evenHeight)
        encoder = try EncoderHandles(
            try Self.open(codec, surfaces: surfaces, fps: fps, bitRate: bitRate), name: name)
        converter = try NV12Converter(width: width, height: height)
    }

    /// An h264_vaapi context on `surfaces`, its rate control fresh.
    private static func open(
        _ codec: UnsafePointer<AVCodec>, surfaces: HardwareFrames, fps: Int, bitRate: Int
    ) throws(MirrorError) -> UnsafeMutablePointer<AVCodecContext> {
        let context = try EncoderHandles.screenContext(
            codec, width: surfaces.width, height: surfaces.height, format: AV_PIX_FMT_VAAPI, fps: fps, keySeconds: 10)
        context.pointee.hw_frames_ctx = av_buffer_ref(surfaces.reference)
        context.pointee.bit_rate = Int64(bitRate)
        context.pointee.rc_max_rate = Int64(bitRate)
        // A VBV of about one frame: no picture may take much longer than a frame's time to leave.
        context.pointee.rc_buffer_size = Int32(clamping: bitRate / max(fps, 1))
        av_opt_set(context.pointee.priv_data, "rc_mode", "VBR", 0)
        av_opt_set(context.pointee.priv_data, "async_depth", "1", 0)
        let opened = avcodec_open2(context, codec, nil)
        guard opened >= 0 else {
            EncoderHandles.free(context)
            throw MirrorError("h264_vaapi did not open on \(surfaces.devicePath): \(EncoderHandles.message(opened))")
        }
        return context
    }

    /// Whether a new bit rate is worth reopening the encoder for (a key picture): any drop (the link carries less),
    /// a rise of a quarter or more (rises come a tenth a second: they are gathered).
    public static func reopens(from current: Int, to asked: Int) -> Bool {
        asked < current || asked >= current + current / 4
    }

    public func restart(relaxed: Bool) throws(MirrorError) {
        let codec = encoder.context.pointee.codec!
        encoder.replaceContext(with: try Self.open(codec, surfaces: surfaces, fps: fps, bitRate: bitRate))
        isRelaxed = relaxed
    }

    public func setBitRate(_ bitRate: Int, relaxed: Bool) throws(MirrorError) {
        isRelaxed = relaxed
        guard Self.reopens(from: self.bitRate, to: bitRate) else { return }
        self.bitRate = bitRate
        try restart(relaxed: relaxed)
    }

    public func encode(
        _ pixels: UnsafeRawPointer, stride: Int, captured: UInt64, _ unit: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let frame = encoder.frame
        av_frame_unref(frame)
        let software = try converter.convert(pixels, stride: stride)
        var status = av_hwframe_get_buffer(surfaces.reference, frame, 0)
        guard status >= 0 else { throw MirrorError("no VA surface for a picture: \(EncoderHandles.message(status))") }
        status = av_hwframe_transfer_data(frame, software, 0)
        guard status >= 0 else {
            throw MirrorError("a picture did not upload to the GPU: \(EncoderHandles.message(status))")
        }
        frame.pointee.pts = Int64(captured)
        frame.pointee.color_range = AVCOL_RANGE_MPEG
        frame.pointee.colorspace = AVCOL_SPC_BT709
        frame.pointee.color_primaries = AVCOL_PRI_BT709
        frame.pointee.color_trc = AVCOL_TRC_BT709
        try encoder.encodeFrame { packet in
            try unit(UnsafeRawBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
        }
    }
}

/// A pool of VA surfaces (NV12, `width`×`height`) on a device: FFmpeg's hw frames context, released with this object.
///
/// Thread-safety: immutable after init.
final class HardwareFrames {
    let reference: UnsafeMutablePointer<AVBufferRef>
    let width: Int
    let height: Int
    /// The device's path, for errors.
    let devicePath: String

    init(device: VAAPIDevice, width: Int, height: Int) throws(MirrorError) {
        guard let frames = av_hwframe_ctx_alloc(device.reference) else { throw MirrorError("out of memory") }
        let context = UnsafeMutableRawPointer(frames.pointee.data).assumingMemoryBound(to: AVHWFramesContext.self)
        context.pointee.format = AV_PIX_FMT_VAAPI
        context.pointee.sw_format = AV_PIX_FMT_NV12
        context.pointee.width = Int32(width)
        context.pointee.height = Int32(height)
        // The picture being uploaded, the one being encoded and the encoder's reference, with room to spare.
        context.pointee.initial_pool_size = 8
        let status = av_hwframe_ctx_init(frames)
        guard status >= 0 else {
            var owned: UnsafeMutablePointer<AVBufferRef>? = frames
            av_buffer_unref(&owned)
            throw MirrorError(
                "VA-API device \(device.path) has no NV12 surfaces of \(width)x\(height): "
                    + EncoderHandles.message(status))
        }
        self.reference = frames
        self.width = width
        self.height = height
        self.devicePath = device.path
    }

    deinit {
        var reference: UnsafeMutablePointer<AVBufferRef>? = self.reference
        av_buffer_unref(&reference)
    }
}

/// The NV12 picture in memory that a screen's picture is converted into (`ScreenConverter`, BT.709 limited range, as
/// `ScreenEncoder`'s) and uploaded from; freed with this object.
///
/// Thread-safety: one thread uses it.
final class NV12Converter {
    private let converter: ScreenConverter
    private let frame: UnsafeMutablePointer<AVFrame>

    init(width: Int, height: Int) throws(MirrorError) {
        converter = try ScreenConverter(width: width, height: height, format: AV_PIX_FMT_NV12)
        guard let frame = av_frame_alloc() else { throw MirrorError("out of memory for a picture") }
        self.frame = frame
        try converter.prepare(frame)
    }

    deinit {
        var frame: UnsafeMutablePointer<AVFrame>? = self.frame
        av_frame_free(&frame)
    }

    /// The picture at `pixels` (`stride` bytes a row) in NV12, valid until the next call.
    func convert(_ pixels: UnsafeRawPointer, stride: Int) throws(MirrorError) -> UnsafeMutablePointer<AVFrame> {
        try converter.convert(pixels, stride: stride, into: frame)
        return frame
    }
}
