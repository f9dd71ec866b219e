internal import CFFmpeg
import Foundation

/// An opened decoder for one stream. Created on the demux thread, then used by its decode thread only.
final class Decoder: @unchecked Sendable {
    // Invariant: after `init` returns on the demux thread, only the stream's decode thread calls into the context
    // (the thread is started after init, which orders the hand-over).
    let context: UnsafeMutablePointer<AVCodecContext>
    /// The stream's time base: the unit of packet and frame timestamps.
    let timeBase: AVRational
    /// Packets that failed to decode and were skipped.
    private(set) var skippedPackets = 0

    init(stream: UnsafeMutablePointer<AVStream>) throws {
        let parameters = stream.pointee.codecpar!
        guard let codec = avcodec_find_decoder(parameters.pointee.codec_id) else {
            let name = String(cString: avcodec_get_name(parameters.pointee.codec_id))
            throw MediaError.ffmpeg("avcodec_find_decoder(\(name))", status: cast_averror(ENOSYS))
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw MediaError.ffmpeg("avcodec_alloc_context3", status: cast_averror(ENOMEM))
        }
        self.context = context
        self.timeBase = stream.pointee.time_base
        try checkFFmpeg("avcodec_parameters_to_context", avcodec_parameters_to_context(context, parameters))
        context.pointee.pkt_timebase = stream.pointee.time_base
        // As ffmpeg: let FFmpeg choose the thread count, unless CAST_DECODER_THREADS names one (benchmarks compare with
        // `ffmpeg -threads N`). Output does not depend on it.
        context.pointee.thread_count = Decoder.threadCount
        // Hostile media may claim any size: a picture larger than 8K is refused before its frames are allocated
        // (FFmpeg's own default allows 2^31 pixels).
        context.pointee.max_pixels = Decoder.maximumPixels
        try checkFFmpeg("avcodec_open2", avcodec_open2(context, codec, nil))
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&pointer)
    }

    /// The most pixels one picture may have: 8192 × 8192, above 8K UHD and DCI 8K.
    static let maximumPixels: Int64 = 8192 * 8192

    /// The decoder threads asked for: CAST_DECODER_THREADS (1...64) when set, else 0 (FFmpeg chooses).
    static let threadCount: Int32 = {
        guard let text = ProcessInfo.processInfo.environment["CAST_DECODER_THREADS"], let n = Int32(text),
            (1...64).contains(n)
        else { return 0 }
        return n
    }()

    /// Forgets every frame in flight and any end-of-stream state (avcodec_flush_buffers): a seek.
    func flush() { avcodec_flush_buffers(context) }

    /// Sends one packet (nil: the end, which starts draining) and hands every frame it yields to `deliver`.
    /// A packet that fails to decode is skipped and counted; `deliver` returning false stops early.
    /// Returns false when `deliver` asked to stop.
    func decode(_ packet: Packet?, deliver: (Frame) -> Bool) -> Bool {
        let sent = avcodec_send_packet(context, packet?.pointer)
        if sent < 0 && sent != cast_averror_eof() && sent != cast_averror(EAGAIN) {
            skippedPackets += 1
        }
        var errors = 0
        while true {
            let frame = Frame()
            let status = avcodec_receive_frame(context, frame.pointer)
            if status == cast_averror(EAGAIN) || status == cast_averror_eof() { return true }
            if status < 0 {
                // A corrupt packet: skip it and keep decoding what follows.
                skippedPackets += 1
                errors += 1
                if errors > 16 { return true }
                continue
            }
            if !deliver(frame) { return false }
        }
    }
}
