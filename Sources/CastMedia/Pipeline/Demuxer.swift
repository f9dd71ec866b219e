internal import CFFmpeg
import Foundation

/// An opened, probed input: the AVFormatContext over a `SourceIO`, or over FFmpeg's own http(s) protocols for a URL.
/// Used by the demux thread only.
final class Demuxer {
    let context: UnsafeMutablePointer<AVFormatContext>
    /// Nil for a URL: FFmpeg owns the AVIOContext.
    private let io: SourceIO?
    private let interrupt: Interrupt
    /// For a URL fetched through a proxy: what the context's `opaque` points to (see `proxiedOpen`), kept alive here.
    private let proxied: ProxiedOpening?

    /// Opens and probes `input`; throws with FFmpeg's message (or the source's own failure). `sourceFormats`: the
    /// demuxers a source may be read with (FFmpeg's `format_whitelist`), nil for any.
    convenience init(input: MediaInput, sourceFormats: String? = nil, interrupt: Interrupt) throws {
        switch input {
        case .source(let source): try self.init(source: source, formats: sourceFormats, interrupt: interrupt)
        case .url(let url, let proxy, let formats):
            try self.init(url: url, proxy: proxy, formats: formats, interrupt: interrupt)
        }
    }

    /// Opens and probes the input, with one of the demuxers `formats` names (nil: any); throws with FFmpeg's message
    /// (or the source's own failure).
    init(source: any MediaSource, formats: String? = nil, interrupt: Interrupt) throws {
        FFmpegLog.install()
        let io = try SourceIO(source: source, interrupt: interrupt)
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        // Served media is read through the source only; whatever it names (an HLS playlist's segments, a
        // `concat` list) may only be opened over the protocols a URL may use, never `file:` on the receiver.
        av_dict_set(&options, "protocol_whitelist", URLInput.protocolWhitelist, 0)
        if let formats { av_dict_set(&options, "format_whitelist", formats, 0) }
        // With a whitelist the bytes decide: a name would make FFmpeg pick a demuxer by its extension first (`image2`
        // for `photo.jpg`), and fail on the whitelist instead of probing on.
        self.context = try Self.open(
            formats == nil ? source.nameHint ?? "" : "", io: io, options: &options, interrupt: interrupt)
        self.io = io
        self.interrupt = interrupt
        self.proxied = nil
        try probe()
    }

    /// Opens and probes an http(s) URL with FFmpeg's protocols, restricted to `URLInput.protocolWhitelist`, with a
    /// read/connect timeout and bounded reconnects. Any other scheme is refused before FFmpeg sees it. With `proxy`,
    /// every connection goes through that http proxy (see `MediaInput.url`); `formats` says which demuxers may read it.
    init(url: String, proxy: String? = nil, formats: URLFormats = .any, interrupt: Interrupt) throws {
        let url = try URLInput.validated(url)
        FFmpegLog.install()
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        let whitelist = proxy == nil ? URLInput.protocolWhitelist : URLInput.proxiedProtocolWhitelist
        av_dict_set(&options, "protocol_whitelist", whitelist, 0)
        if formats == .strangers { av_dict_set(&options, "format_whitelist", URLInput.strangerFormatWhitelist, 0) }
        av_dict_set(&options, "rw_timeout", String(Int(URLInput.timeout * 1_000_000)), 0)
        // A dropped connection is reopened at the offset reached (also for streams and on network errors), with
        // a back-off that gives up after a few seconds: a dead server ends in playbackError, not a hang.
        av_dict_set(&options, "reconnect", "1", 0)
        av_dict_set(&options, "reconnect_streamed", "1", 0)
        av_dict_set(&options, "reconnect_on_network_error", "1", 0)
        av_dict_set(&options, "reconnect_delay_max", String(URLInput.reconnectDelayMax), 0)
        av_dict_set(&options, "user_agent", "castd (Lavf)", 0)
        // http passes the proxy on to tls (https: a CONNECT tunnel); every other stream (redirects aside, which http
        // follows itself) is opened through `proxiedOpen`, which adds it again. FFmpeg would skip a proxy for hosts in
        // $no_proxy: castd clears that when it starts (Receiver).
        let proxied = proxy.map(ProxiedOpening.init)
        if let proxy { av_dict_set(&options, "http_proxy", proxy, 0) }
        self.context = try Self.open(url, io: nil, options: &options, interrupt: interrupt, proxied: proxied)
        self.io = nil
        self.interrupt = interrupt
        self.proxied = proxied
        try probe()
    }

    /// avformat_open_input with the interrupt callback set (so that stop() ends a blocked open), over `io` when
    /// given.
    private static func open(
        _ url: String, io: SourceIO?, options: inout OpaquePointer?, interrupt: Interrupt,
        proxied: ProxiedOpening? = nil
    ) throws -> UnsafeMutablePointer<AVFormatContext> {
        guard let context = avformat_alloc_context() else {
            throw MediaError.ffmpeg("avformat_alloc_context", status: cast_averror(ENOMEM))
        }
        if let io {
            context.pointee.pb = io.context
            context.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        }
        context.pointee.interrupt_callback = AVIOInterruptCB(
            callback: interruptCallback, opaque: Unmanaged.passUnretained(interrupt).toOpaque())
        if let proxied {
            // Nested contexts (HLS) get the same `opaque`, and open through the same callback.
            context.pointee.opaque = Unmanaged.passUnretained(proxied).toOpaque()
            context.pointee.io_open = proxiedOpen
        }
        // As ffmpeg does: find every program of an MPEG-TS before deciding what the streams are.
        av_dict_set(&options, "scan_all_pmts", "1", 0)
        // Probing reads at most this much (FFmpeg's defaults, stated so that they bound hostile media here too).
        av_dict_set(&options, "probesize", String(Demuxer.probeSize), 0)
        av_dict_set(&options, "analyzeduration", String(Demuxer.analyzeMicroseconds), 0)
        var contextOrNil: UnsafeMutablePointer<AVFormatContext>? = context
        let status = avformat_open_input(&contextOrNil, url, nil, &options)
        guard status >= 0, let opened = contextOrNil else {
            // avformat_open_input frees the context on failure.
            throw failure("avformat_open_input", status: status, io: io)
        }
        return opened
    }

    /// The most bytes probing reads, and the most media time (µs) it analyses: FFmpeg's defaults.
    static let probeSize = 5_000_000
    static let analyzeMicroseconds = 5_000_000

    /// Called once every property is set: when it throws, deinit closes the context.
    private func probe() throws {
        let probe = avformat_find_stream_info(context, nil)
        guard probe >= 0 else { throw Self.failure("avformat_find_stream_info", status: probe, io: io) }
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVFormatContext>? = context
        avformat_close_input(&pointer)
    }

    private static func failure(_ function: String, status: Int32, io: SourceIO?) -> MediaError {
        if let sourceError = io?.sourceFailure {
            return MediaError.source("\(function): \(ffmpegMessage(status)) (source: \(sourceError))")
        }
        return MediaError.ffmpeg(function, status: status)
    }

    /// Whether a URL input can seek: not when the demuxer says it definitely cannot (a live HLS playlist);
    /// otherwise when the server takes byte ranges, or when the demuxer seeks by itself over segments (HLS VOD).
    var isSeekable: Bool {
        if context.pointee.ctx_flags & AVFMTCTX_UNSEEKABLE != 0 { return false }
        if let pb = context.pointee.pb, pb.pointee.seekable & AVIO_SEEKABLE_NORMAL != 0 { return true }
        return String(cString: context.pointee.iformat.pointee.name) == "hls" && duration != nil
    }

    /// Whether FFmpeg reads the input itself (a URL) rather than through a `MediaSource`.
    var isURL: Bool { io == nil }

    /// The bytes the AVIOContext has read from the input so far.
    var bytesRead: Int64 { context.pointee.pb?.pointee.bytes_read ?? 0 }

    /// The container's bit rate (bits/s), 0 when unknown.
    var bitRate: Int64 { context.pointee.bit_rate }

    /// The input's size in bytes, when known.
    var size: Int64? {
        guard let pb = context.pointee.pb else { return nil }
        let size = avio_size(pb)
        return size > 0 ? size : nil
    }

    /// The best stream of `type` that has a decoder (a film's second audio track in a codec this FFmpeg lacks is
    /// passed over for one it has); else the best one of that type, whose decoder then fails with a message naming
    /// it rather than the stream being ignored; nil when there is none.
    func bestStream(_ type: AVMediaType) -> UnsafeMutablePointer<AVStream>? {
        var decoder: UnsafePointer<AVCodec>?
        var index = av_find_best_stream(context, type, -1, -1, &decoder, 0)
        if index < 0 { index = av_find_best_stream(context, type, -1, -1, nil, 0) }
        guard index >= 0 else { return nil }
        return context.pointee.streams[Int(index)]
    }

    /// The best audio stream whose language tag is `language` (ISO 639: "fra" or "fr" both pick a "fra" track; case
    /// does not matter) and that has a decoder; nil when no track is in that language.
    func audioStream(inLanguage language: String) -> UnsafeMutablePointer<AVStream>? {
        let wanted = language.lowercased()
        guard !wanted.isEmpty else { return nil }
        var matching: [Int32] = []
        for index in 0..<Int(context.pointee.nb_streams) {
            guard let stream = context.pointee.streams[index], let par = stream.pointee.codecpar,
                par.pointee.codec_type == AVMEDIA_TYPE_AUDIO, avcodec_find_decoder(par.pointee.codec_id) != nil,
                let tag = av_dict_get(stream.pointee.metadata, "language", nil, 0)
            else { continue }
            let code = String(cString: tag.pointee.value).lowercased()
            if code == wanted || (wanted.count == 2 && code.count == 3 && code.hasPrefix(wanted)) {
                matching.append(Int32(index))
            }
        }
        guard let first = matching.first else { return nil }
        // Among several tracks in that language, the one FFmpeg would pick (the default one, the most channels…).
        let best = av_find_best_stream(context, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        return context.pointee.streams[Int(matching.contains(best) ? best : first)]
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
            if let sourceError = io?.sourceFailure {
                throw MediaError.source("av_read_frame: \(ffmpegMessage(status)) (source: \(sourceError))")
            }
            if status == cast_averror_exit() || interrupt.isRaised {
                throw MediaError.ffmpeg("av_read_frame", status: status)
            }
            guard let io else {
                // A URL: the network failing (after the reconnects) is an error, the server's end of file is not.
                if let pb = context.pointee.pb, pb.pointee.error < 0, pb.pointee.error != cast_averror_eof() {
                    throw MediaError.ffmpeg("av_read_frame", status: pb.pointee.error)
                }
                if let pb = context.pointee.pb, avio_feof(pb) != 0 { return false }
                throw MediaError.ffmpeg("av_read_frame", status: status)
            }
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

/// What a proxied URL's format context points to in its `opaque`: the proxy every stream opened for it goes through.
final class ProxiedOpening: Sendable {
    let proxy: String

    init(_ proxy: String) {
        self.proxy = proxy
    }
}

/// The `io_open` of a URL fetched through a proxy (`MediaInput.url`), for every stream the demuxers open (the URL,
/// HLS playlists, segments and keys): only http(s), possibly under `crypto`, each with the proxy set. Nothing else may
/// be opened, `httpproxy:` above all: it is on the whitelist for https through the proxy, and named by a playlist it
/// would connect around the proxy.
private func proxiedOpen(
    _ context: UnsafeMutablePointer<AVFormatContext>?, _ pb: UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>?,
    _ url: UnsafePointer<CChar>?, _ flags: Int32, _ options: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    guard let context, let url, let opaque = context.pointee.opaque else { return cast_averror(EINVAL) }
    guard URLInput.mayOpenThroughProxy(String(cString: url)) else { return cast_averror(EPERM) }
    let proxy = Unmanaged<ProxiedOpening>.fromOpaque(opaque).takeUnretainedValue().proxy
    var own: OpaquePointer?
    defer { av_dict_free(&own) }
    return withUnsafeMutablePointer(to: &own) { ownPointer in
        let dictionary = options ?? ownPointer
        av_dict_set(dictionary, "http_proxy", proxy, 0)
        av_dict_set(dictionary, "protocol_whitelist", URLInput.proxiedProtocolWhitelist, 0)
        return avio_open2(pb, url, flags, &context.pointee.interrupt_callback, dictionary)
    }
}
