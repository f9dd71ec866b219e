internal import CFFmpeg
import Foundation
import Glibc

/// Writes one line per presented video frame in exactly the format of `ffmpeg -i IN -map 0:v -f framemd5 -`.
///
/// The checksum is the MD5 of the frame packed as the rawvideo encoder packs it. The timestamps follow what the
/// ffmpeg tool does on the way to that muxer: the container's start time is subtracted, the encoder's time base is
/// 1 / the guessed frame rate, and frames pass ffmpeg's variable-frame-rate sync (which renumbers them and drops a
/// frame that would land on the previous one), so the lines match ffmpeg's bit for bit.
/// Used by the video output thread only.
final class FrameMD5Writer {
    private let file: UnsafeMutablePointer<FILE>
    private let path: String
    private let streamTimeBase: AVRational
    private let encoderTimeBase: AVRational
    private let frameRate: AVRational
    /// ffmpeg's input ts_offset (minus the container's start time), in the stream's time base.
    private let timestampOffset: Int64
    private var wroteHeader = false
    /// ffmpeg's `ost->sync_opts`: the next output timestamp, in the encoder's time base.
    private var nextTimestamp: Int64 = 0
    private var buffer: [UInt8] = []
    /// Where each frame's packed bytes also go (`CAST_FRAMES_RAW`), if anywhere.
    private let raw: UnsafeMutablePointer<FILE>?

    /// The environment variable naming a file that receives every presented frame's packed bytes (what the MD5 is
    /// of, as `ffmpeg -f rawvideo` writes them), beside the framemd5 lines: so that a test can measure how close a
    /// frame that is not bit-exact is (bitmap subtitles, blended unlike FFmpeg's overlay filter). A diagnostic for
    /// tests and for the curious; nothing is written without it.
    static let rawFramesVariable = "CAST_FRAMES_RAW"

    /// Opens (truncates) `path`. `containerStartTime` is in AV_TIME_BASE units.
    init(path: String, streamTimeBase: AVRational, frameRate: AVRational, containerStartTime: Int64) throws {
        guard let file = fopen(path, "w") else { throw MediaError.system("fopen(\(path))", errno: errno) }
        self.file = file
        self.path = path
        self.streamTimeBase = streamTimeBase
        self.frameRate = frameRate
        self.encoderTimeBase = frameRate.num > 0 && frameRate.den > 0 ? av_inv_q(frameRate) : streamTimeBase
        self.timestampOffset = av_rescale_q(-containerStartTime, cast_av_time_base_q(), streamTimeBase)
        if let rawPath = ProcessInfo.processInfo.environment[Self.rawFramesVariable], !rawPath.isEmpty {
            guard let raw = fopen(rawPath, "w") else {
                fclose(file)
                throw MediaError.system("fopen(\(rawPath))", errno: errno)
            }
            self.raw = raw
        } else {
            self.raw = nil
        }
    }

    deinit {
        fclose(file)
        if let raw { fclose(raw) }
    }

    /// Writes the frame's line (after the header, on the first frame) and flushes; a frame that ffmpeg's sync would
    /// drop writes nothing.
    func write(_ frame: Frame) throws {
        let f = frame.pointer
        if !wroteHeader { try writeHeader(for: f) }
        guard let timestamp = outputTimestamp(for: f) else { return }
        let size = cast_frame_image_size(f)
        try checkFFmpeg("av_image_get_buffer_size", size)
        if buffer.count < Int(size) { buffer = [UInt8](repeating: 0, count: Int(size)) }
        var digest = [UInt8](repeating: 0, count: 16)
        try buffer.withUnsafeMutableBufferPointer { bytes in
            try checkFFmpeg("av_image_copy_to_buffer", cast_frame_copy_to_buffer(f, bytes.baseAddress, size))
            av_md5_sum(&digest, bytes.baseAddress, Int(size))
            if let raw, fwrite(bytes.baseAddress, 1, Int(size), raw) != Int(size) {
                throw MediaError.system("write(\(Self.rawFramesVariable))", errno: errno)
            }
        }
        let hash = digest.map { String(format: "%02x", $0) }.joined()
        let duration: Int64 = encoderTimeBase.num * 1000 > encoderTimeBase.den ? 1 : 0
        try put(String(format: "0, %10lld, %10lld, %8lld, %8d, %@\n", timestamp, timestamp, duration, size, hash))
    }

    /// Playback jumped (a seek): ffmpeg would have started afresh at the frame that follows, so the timestamp
    /// sync starts afresh too and that frame's line matches ffmpeg's line for it.
    func restart() { nextTimestamp = 0 }

    private func writeHeader(for frame: UnsafeMutablePointer<AVFrame>) throws {
        wroteHeader = true
        let version = avformat_version()
        let sar = frame.pointee.sample_aspect_ratio
        try put(
            """
            #format: frame checksums
            #version: 2
            #hash: MD5
            #software: Lavf\(version >> 16).\((version >> 8) & 0xFF).\(version & 0xFF)
            #tb 0: \(encoderTimeBase.num)/\(encoderTimeBase.den)
            #media_type 0: video
            #codec_id 0: rawvideo
            #dimensions 0: \(frame.pointee.width)x\(frame.pointee.height)
            #sar 0: \(sar.num)/\(sar.den)
            #stream#, dts,        pts, duration,     size, hash

            """)
    }

    private func put(_ text: String) throws {
        guard fputs(text, file) >= 0, fflush(file) == 0 else { throw MediaError.system("write(\(path))", errno: errno) }
    }

    /// ffmpeg's do_video_out in VSYNC_VFR mode (fftools/ffmpeg.c, FFmpeg 5.1): the output timestamp of this frame,
    /// or nil when ffmpeg drops it.
    private func outputTimestamp(for frame: UnsafeMutablePointer<AVFrame>) -> Int64? {
        let noPTS = cast_av_nopts_value()
        let encoderSeconds = av_q2d(encoderTimeBase)
        var syncInput = Double(noPTS)
        let best = frame.pointee.best_effort_timestamp
        if best != noPTS {
            let pts = best + timestampOffset
            // adjust_frame_pts_to_encoder_tb: the timestamp in the encoder's time base with extra precision.
            var precise = encoderTimeBase
            let extraBits = min(max(29 - av_log2(UInt32(precise.den)), 0), 16)
            precise.den <<= extraBits
            syncInput = Double(av_rescale_q(pts, streamTimeBase, precise)) / Double(1 << extraBits)
            syncInput += (syncInput > 0 ? 1 : syncInput < 0 ? -1 : 0) * 1.0 / Double(1 << 17)
        }
        var duration = 0.0
        if frameRate.num > 0 && frameRate.den > 0 { duration = 1 / (av_q2d(frameRate) * encoderSeconds) }
        let packetDuration = Float(Double(frame.pointee.pkt_duration) * av_q2d(streamTimeBase) / encoderSeconds)
        let rounded = packetDuration.rounded(.toNearestOrEven)
        if rounded > 0 { duration = Double(rounded) }

        var delta0 = syncInput - Double(nextTimestamp)
        let delta = delta0 + duration
        if delta0 < 0 && delta > 0 {
            syncInput = Double(nextTimestamp)
            delta0 = 0
        }
        if delta <= -0.6 { return nil }
        if delta > 0.6 { nextTimestamp = Int64(syncInput.rounded(.toNearestOrEven)) }
        defer { nextTimestamp += 1 }
        return nextTimestamp
    }
}
