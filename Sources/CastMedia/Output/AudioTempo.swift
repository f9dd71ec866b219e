internal import CFFmpeg

/// Changes the tempo of interleaved S16 audio keeping its pitch: libavfilter's `atempo` (abuffer → atempo →
/// abuffersink). Used by the audio output thread only.
final class AudioTempo {
    /// Media seconds per second of output.
    let tempo: Double
    private let rate: Int
    private let channels: Int
    private var graph: UnsafeMutablePointer<AVFilterGraph>?
    private let source: UnsafeMutablePointer<AVFilterContext>
    private let sink: UnsafeMutablePointer<AVFilterContext>
    private let output = Frame()

    /// A filter graph for S16 audio at `rate` with `channels`, playing `tempo` times as fast (0.5...100).
    init(tempo: Double, rate: Int, channels: Int) throws {
        self.tempo = tempo
        self.rate = rate
        self.channels = channels
        try FilterLibrary.load()
        guard let graph = cast_avfilter_graph_alloc() else {
            throw MediaError.ffmpeg("avfilter_graph_alloc", status: cast_averror(ENOMEM))
        }
        self.graph = graph
        var layout = AVChannelLayout()
        av_channel_layout_default(&layout, Int32(channels))
        var description = [CChar](repeating: 0, count: 64)
        av_channel_layout_describe(&layout, &description, description.count)
        av_channel_layout_uninit(&layout)
        let arguments =
            "time_base=1/\(rate):sample_rate=\(rate):sample_fmt=s16:channel_layout=\(string(fromCBuffer: description))"
        do {
            let source = try Self.create(graph, "abuffer", name: "in", arguments: arguments)
            let atempo = try Self.create(graph, "atempo", name: "tempo", arguments: "tempo=\(tempo)")
            let sink = try Self.create(graph, "abuffersink", name: "out", arguments: nil)
            try checkFFmpeg("avfilter_link", cast_avfilter_link(source, 0, atempo, 0))
            try checkFFmpeg("avfilter_link", cast_avfilter_link(atempo, 0, sink, 0))
            try checkFFmpeg("avfilter_graph_config", cast_avfilter_graph_config(graph, nil))
            self.source = source
            self.sink = sink
        } catch {
            cast_avfilter_graph_free(&self.graph)
            throw error
        }
    }

    deinit { cast_avfilter_graph_free(&graph) }

    private static func create(
        _ graph: UnsafeMutablePointer<AVFilterGraph>, _ filter: String, name: String, arguments: String?
    ) throws -> UnsafeMutablePointer<AVFilterContext> {
        var context: UnsafeMutablePointer<AVFilterContext>?
        try checkFFmpeg(
            "avfilter_graph_create_filter(\(filter))",
            cast_avfilter_graph_create_filter(&context, cast_avfilter_get_by_name(filter), name, arguments, nil, graph))
        guard let context else { throw MediaError.other("avfilter_graph_create_filter(\(filter)): no context") }
        return context
    }

    /// Filters `bytes` (nil: the end, which flushes what the filter holds) and hands the output to `body`.
    func process(_ bytes: UnsafeRawBufferPointer?, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let frameBytes = channels * 2
        if let bytes {
            let samples = bytes.count / frameBytes
            guard samples > 0 else { return }
            let input = Frame()
            let f = input.pointer
            f.pointee.format = AV_SAMPLE_FMT_S16.rawValue
            f.pointee.sample_rate = Int32(rate)
            f.pointee.nb_samples = Int32(samples)
            av_channel_layout_default(&f.pointee.ch_layout, Int32(channels))
            try checkFFmpeg("av_frame_get_buffer", av_frame_get_buffer(f, 0))
            f.pointee.data.0!.update(
                from: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), count: samples * frameBytes)
            try checkFFmpeg("av_buffersrc_add_frame", cast_av_buffersrc_add_frame(source, f))
        } else {
            try checkFFmpeg("av_buffersrc_add_frame", cast_av_buffersrc_add_frame(source, nil))
        }
        while true {
            let status = cast_av_buffersink_get_frame(sink, output.pointer)
            if status == cast_averror(EAGAIN) || status == cast_averror_eof() { return }
            try checkFFmpeg("av_buffersink_get_frame", status)
            defer { av_frame_unref(output.pointer) }
            let count = Int(output.pointer.pointee.nb_samples) * frameBytes
            try body(UnsafeRawBufferPointer(start: output.pointer.pointee.data.0, count: count))
        }
    }
}
