internal import CFFmpeg

/// swscale from the screen's BGRX (full range, as the X server gives it) to a 4:2:0 picture (`YUV420P` for libx264,
/// `NV12` for a VA-API upload) in BT.709 limited range, as the stream is flagged, at the even size 4:2:0 needs (the
/// last column or row of an odd screen is dropped). Both encoders convert through it, so they agree on colour.
///
/// Thread-safety: one thread uses it.
final class ScreenConverter {
    private let scaler: OpaquePointer
    private let format: AVPixelFormat
    /// The screen's height: the rows swscale reads.
    private let sourceHeight: Int32
    /// The picture's size: the screen's, made even.
    let width: Int
    let height: Int

    init(width screenWidth: Int, height screenHeight: Int, format: AVPixelFormat) throws(MirrorError) {
        width = screenWidth & ~1
        height = screenHeight & ~1
        guard
            let scaler = sws_getContext(
                Int32(screenWidth), Int32(screenHeight), AV_PIX_FMT_BGR0, Int32(width), Int32(height), format,
                SWS_POINT, nil, nil, nil)
        else { throw MirrorError("swscale cannot convert the screen's pixels") }
        self.scaler = scaler
        self.format = format
        self.sourceHeight = Int32(screenHeight)
        let bt709 = sws_getCoefficients(SWS_CS_ITU709)
        sws_setColorspaceDetails(scaler, bt709, 1, bt709, 0, 0, 1 << 16, 1 << 16)
    }

    deinit { sws_freeContext(scaler) }

    /// Makes `frame` this converter's output: its format, size and colour flags, with buffers of its own.
    func prepare(_ frame: UnsafeMutablePointer<AVFrame>) throws(MirrorError) {
        frame.pointee.format = format.rawValue
        frame.pointee.width = Int32(width)
        frame.pointee.height = Int32(height)
        frame.pointee.color_range = AVCOL_RANGE_MPEG
        frame.pointee.colorspace = AVCOL_SPC_BT709
        frame.pointee.color_primaries = AVCOL_PRI_BT709
        frame.pointee.color_trc = AVCOL_TRC_BT709
        guard av_frame_get_buffer(frame, 0) >= 0 else { throw MirrorError("out of memory for a picture") }
    }

    /// Converts the picture at `pixels` (`stride` bytes a row) into `frame` (prepared by `prepare`).
    func convert(_ pixels: UnsafeRawPointer, stride: Int, into frame: UnsafeMutablePointer<AVFrame>) throws(MirrorError)
    {
        guard av_frame_make_writable(frame) >= 0 else { throw MirrorError("out of memory for a picture") }
        var source: [UnsafePointer<UInt8>?] = [pixels.assumingMemoryBound(to: UInt8.self), nil, nil, nil]
        var strides: [Int32] = [Int32(stride), 0, 0, 0]
        let planes = withUnsafeMutablePointer(to: &frame.pointee.data) {
            $0.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 8) { $0 }
        }
        let lines = withUnsafeMutablePointer(to: &frame.pointee.linesize) {
            $0.withMemoryRebound(to: Int32.self, capacity: 8) { $0 }
        }
        sws_scale(scaler, &source, &strides, 0, sourceHeight, planes, lines)
    }
}
