internal import CFFmpeg
import Foundation

/// An opened, probed input: the AVFormatContext over a `SourceIO`. Used by the demux thread only.
final class Demuxer {
    let context: UnsafeMutablePointer<AVFormatContext>
    private let io: SourceIO
    private let interrupt: Interrupt

    /// Opens and probes the input; throws with FFmpeg's message (or the source's own failure).
    init(source: any MediaSource, interrupt: Interrupt) throws {
        let io = try SourceIO(source: source, interrupt: interrupt)
        guard var context = avformat_alloc_context() else {
            throw MediaError.ffmpeg("avformat_alloc_context", status: cast_averror(ENOMEM))
        }
        context.pointee.pb = io.context
        context.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        context.pointee.interrupt_callback = AVIOInterruptCB(
            callback: interruptCallback, opaque: Unmanaged.passUnretained(interrupt).toOpaque())
        var options: OpaquePointer?
        // As ffmpeg does: find every program of an MPEG-TS before deciding what the streams are.
        av_dict_set(&options, "scan_all_pmts", "1", 0)
        var contextOrNil: UnsafeMutablePointer<AVFormatContext>? = context
        let status = avformat_open_input(&contextOrNil, source.nameHint ?? "", nil, &options)
        av_dict_free(&options)
        guard status >= 0, let opened = contextOrNil else {
            // avformat_open_input frees the context on failure.
            throw Self.failure("avformat_open_input", status: status, io: io)
        }
        context = opened
        self.context = context
        self.io = io
        self.interrupt = interrupt
        let probe = avformat_find_stream_info(context, nil)
        guard probe >= 0 else { throw Self.failure("avformat_find_stream_info", status: probe, io: io) }
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVFormatContext>? = context
        avformat_close_input(&pointer)
    }

    private static func failure(_ function: String, status: Int32, io: SourceIO) -> MediaError {
        if let sourceError = io.sourceFailure {
            return MediaError.other("\(function): \(ffmpegMessage(status)) (source: \(sourceError))")
        }
        return MediaError.ffmpeg(function, status: status)
    }

    /// The best stream of `type` that has a decoder, or nil.
    func bestStream(_ type: AVMediaType) -> UnsafeMutablePointer<AVStream>? {
        let index = av_find_best_stream(context, type, -1, -1, nil, 0)
        guard index >= 0 else { return nil }
        return context.pointee.streams[Int(index)]
    }

    /// The duration in seconds, when the container knows it.
    var duration: Double? {
        let d = context.pointee.duration
        guard d != cast_av_nopts_value(), d > 0 else { return nil }
        return Double(d) / Double(AV_TIME_BASE)
    }

    /// The container's start time (AV_TIME_BASE units) that ffmpeg subtracts from every timestamp, or 0.
    var startTime: Int64 {
        let s = context.pointee.start_time
        return s == cast_av_nopts_value() ? 0 : s
    }

    /// Seeks so that playback can begin at `seconds`.
    func seek(to seconds: Double) throws {
        let target = startTime + Int64(seconds * Double(AV_TIME_BASE))
        try checkFFmpeg("avformat_seek_file", avformat_seek_file(context, -1, .min, target, target, 0))
    }

    /// Reads the next packet into `packet`; false at the end of the input. Throws on read failure.
    func read(into packet: Packet) throws -> Bool {
        let status = av_read_frame(context, packet.pointer)
        if status == cast_averror_eof() { return false }
        if status < 0 {
            // A truncated input often ends in an I/O error after the last whole packet: the end, not a failure,
            // unless the source itself failed or playback was stopped.
            if let sourceError = io.sourceFailure {
                throw MediaError.other("av_read_frame: \(ffmpegMessage(status)) (source: \(sourceError))")
            }
            if status == cast_averror_exit() || interrupt.isRaised { throw MediaError.ffmpeg("av_read_frame", status: status) }
            if avio_feof(io.context) != 0 { return false }
            throw MediaError.ffmpeg("av_read_frame", status: status)
        }
        return true
    }
}

private func interruptCallback(_ opaque: UnsafeMutableRawPointer?) -> Int32 {
    guard let opaque else { return 0 }
    return Unmanaged<Interrupt>.fromOpaque(opaque).takeUnretainedValue().isRaised ? 1 : 0
}
