internal import CFFmpeg
import Foundation

/// An opened decoder for one stream. Created on the demux thread, then used by its decode thread only.
final class Decoder: @unchecked Sendable {
    // Invariant: after `init` returns on the demux thread, only the stream's decode thread calls into the context
    // (the thread is started after init, which orders the hand-over).
    let context: UnsafeMutablePointer<AVCodecContext>
    /// The stream's time base: the unit of packet and frame timestamps.
    let timeBase: AVRational
    /// The stream in the user's words, for errors: "audio stream #1 (dts, 48000 Hz, 5.1(side))".
    let streamName: String
    /// Packets that failed to decode and were skipped.
    var skippedPackets = 0
    /// Frames decoded so far (since the start, across seeks).
    var decodedFrames = 0
    /// Packets that failed one after another since the last frame, and FFmpeg's status for the last of them.
    private(set) var failuresInARow = 0
    private(set) var lastFailure: Int32 = 0

    init(stream: UnsafeMutablePointer<AVStream>) throws {
        let parameters = stream.pointee.codecpar!
        let streamName = Self.name(of: stream)
        self.streamName = streamName
        guard let codec = avcodec_find_decoder(parameters.pointee.codec_id) else {
            // "audio stream #0 (unknown codec, 44100 Hz, mono): Decoder not found", as ffmpeg words it.
            throw MediaError.ffmpeg(streamName, status: cast_averror_decoder_not_found())
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw MediaError.ffmpeg("avcodec_alloc_context3", status: cast_averror(ENOMEM))
        }
        self.context = context
        self.timeBase = stream.pointee.time_base
        try checkFFmpeg(
            "\(streamName): avcodec_parameters_to_context", avcodec_parameters_to_context(context, parameters))
        context.pointee.pkt_timebase = stream.pointee.time_base
        // As ffmpeg: let FFmpeg choose the thread count, unless CAST_DECODER_THREADS names one (benchmarks compare with
        // `ffmpeg -threads N`). Output does not depend on it.
        context.pointee.thread_count = Decoder.threadCount
        // Hostile media may claim any size: a picture larger than 8K is refused before its frames are allocated
        // (FFmpeg's own default allows 2^31 pixels).
        context.pointee.max_pixels = Decoder.maximumPixels
        try checkFFmpeg("\(streamName): avcodec_open2", avcodec_open2(context, codec, nil))
    }

    /// "audio stream #1 (ac3, 48000 Hz, 5.1(side))", "video stream #0 (h264, 1920x1080)": what a user (and ffprobe)
    /// calls the stream.
    static func name(of stream: UnsafeMutablePointer<AVStream>) -> String {
        let parameters = stream.pointee.codecpar.pointee
        var details = [String(cString: avcodec_get_name(parameters.codec_id))]
        if parameters.codec_id == AV_CODEC_ID_NONE {
            // What the container called it, when it said (a fourcc); Matroska's unknown codec ids are not kept.
            var tag = [CChar](repeating: 0, count: 32)
            av_fourcc_make_string(&tag, parameters.codec_tag)
            details = [parameters.codec_tag == 0 ? "unknown codec" : "unknown codec \(string(fromCBuffer: tag))"]
        }
        switch parameters.codec_type {
        case AVMEDIA_TYPE_AUDIO:
            if parameters.sample_rate > 0 { details.append("\(parameters.sample_rate) Hz") }
            var layout = parameters.ch_layout
            var text = [CChar](repeating: 0, count: 128)
            if layout.nb_channels > 0, av_channel_layout_describe(&layout, &text, text.count) >= 0 {
                details.append(string(fromCBuffer: text))
            }
        case AVMEDIA_TYPE_VIDEO:
            if parameters.width > 0 && parameters.height > 0 {
                details.append("\(parameters.width)x\(parameters.height)")
            }
        default: break
        }
        let type = av_get_media_type_string(parameters.codec_type).map { String(cString: $0) } ?? "data"
        return "\(type) stream #\(stream.pointee.index) (\(details.joined(separator: ", ")))"
    }

    /// Packets in a row that may fail to decode before any frame came out, before the stream counts as one the
    /// engine cannot decode: about two seconds of audio, or a few seconds of video; a stream cut in the middle
    /// (MPEG-TS joined mid-GOP) fails far fewer.
    static let failuresBeforeGivingUp = 64

    /// Why this stream cannot be played, once it is clear: no frame came out of the decoder while packets kept
    /// failing (`failuresBeforeGivingUp` in a row, or every packet until the end). nil while it may still decode.
    func undecodable(atEnd: Bool) -> MediaError? {
        guard decodedFrames == 0, failuresInARow >= (atEnd ? 1 : Self.failuresBeforeGivingUp) else { return nil }
        let count = atEnd ? "every packet" : "\(failuresInARow) packets in a row"
        return MediaError.ffmpeg("\(streamName): \(count) failed to decode, no frame came out", status: lastFailure)
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
            failuresInARow += 1
            lastFailure = sent
        }
        var errors = 0
        while true {
            let frame = Frame()
            let status = avcodec_receive_frame(context, frame.pointer)
            if status == cast_averror(EAGAIN) || status == cast_averror_eof() { return true }
            if status < 0 {
                // A corrupt packet: skip it and keep decoding what follows.
                skippedPackets += 1
                failuresInARow += 1
                lastFailure = status
                errors += 1
                if errors > 16 { return true }
                continue
            }
            decodedFrames += 1
            failuresInARow = 0
            if !deliver(frame) { return false }
        }
    }
}
