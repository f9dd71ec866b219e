internal import CFFmpeg
import Foundation

/// What happens to decoded pictures between the video decoder and the presenters, as the ffmpeg tool does it on the
/// way to an encoder: the container's sample aspect ratio, then one libavfilter graph:
///
/// - **Orientation**, for every output: a phone video's pictures are turned upright (`VideoOrientation`, ffmpeg's
///   autorotate), so framemd5 lines match `ffmpeg -i IN -f framemd5` and the window shows people standing up.
/// - **Colour for an 8-bit screen**, for a window only (framemd5 keeps the decoded pixels, as its contract says):
///   HDR (PQ or HLG transfer) is tone-mapped to SDR BT.709 with `toneMapFilters`, and other pictures of more than 8
///   bits per sample are converted to 8-bit 4:2:0 with swscale (bicubic, as the ffmpeg tool), so the window gets a
///   picture SDL can show as it is. docs/video-output.md says why these filters.
///
/// The graph is made on the first frame and again whenever the frames' size, pixel format or colour properties change
/// (a stream that switches resolution).
final class VideoTransform: @unchecked Sendable {
    // Invariant: used by one thread at a time. A player's is made on the demux thread, then used by the video decode
    // thread only (the thread is started after init, which orders the hand-over); a thumbnailer's is used under its
    // `work` lock, like the decoder beside it.
    private let orientation: VideoOrientation
    private let forDisplay: Bool
    private let timeBase: AVRational
    /// The stream's sample aspect ratio as the container declares it (0/1: not declared).
    private let streamAspect: AVRational
    private let streamName: String
    private var graph: UnsafeMutablePointer<AVFilterGraph>?
    private var source: UnsafeMutablePointer<AVFilterContext>?
    private var sink: UnsafeMutablePointer<AVFilterContext>?
    /// What the current graph was made for: the frames' shape and the chain.
    private var madeFor: Shape?

    private struct Shape: Equatable {
        var width: Int32
        var height: Int32
        var format: Int32
        var filters: String
    }

    /// `forDisplay`: the pictures go to a window (convert colour for it), not to framemd5 or nowhere.
    init(stream: UnsafeMutablePointer<AVStream>, forDisplay: Bool, streamName: String) {
        orientation = VideoOrientation(stream: stream)
        self.forDisplay = forDisplay
        timeBase = stream.pointee.time_base
        streamAspect = stream.pointee.sample_aspect_ratio
        self.streamName = streamName
    }

    deinit { freeGraph() }

    /// Sends `frame` through the graph and hands every picture that comes out to `deliver` (the frame itself when
    /// there is nothing to do). Returns false when `deliver` asked to stop.
    func apply(_ frame: Frame, deliver: (Frame) -> Bool) throws -> Bool {
        // The container's pixel shape wins over the bitstream's, as in the ffmpeg tool's decode_video (Matroska's
        // display size, MP4's pasp): an anamorphic picture is shown at its intended width.
        if streamAspect.num > 0 && streamAspect.den > 0 {
            frame.pointer.pointee.sample_aspect_ratio = streamAspect
        }
        let f = frame.pointer.pointee
        let colour = forDisplay ? Self.colourFilters(for: f) : ""
        let filters = [colour, orientation.filters].filter { !$0.isEmpty }.joined(separator: ",")
        guard !filters.isEmpty else { return deliver(frame) }
        let shape = Shape(width: f.width, height: f.height, format: f.format, filters: filters)
        if shape != madeFor { try makeGraph(for: f, shape: shape) }
        guard let source, let sink else { return deliver(frame) }
        try checkFFmpeg(
            "\(streamName): av_buffersrc_add_frame", cast_av_buffersrc_add_frame(source, frame.pointer))
        while true {
            let picture = Frame()
            let status = cast_av_buffersink_get_frame(sink, picture.pointer)
            if status == cast_averror(EAGAIN) || status == cast_averror_eof() { return true }
            try checkFFmpeg("\(streamName): av_buffersink_get_frame", status)
            if !deliver(picture) { return false }
        }
    }

    /// The filters that make a picture right for an 8-bit SDR window, or "" when it already is: HDR is tone-mapped
    /// (`toneMapFilters`), deeper SDR YUV is converted to 8-bit 4:2:0.
    static func colourFilters(for frame: AVFrame) -> String {
        if let toneMap = toneMapFilters(for: frame) { return toneMap }
        guard let descriptor = av_pix_fmt_desc_get(AVPixelFormat(frame.format)) else { return "" }
        let flags = descriptor.pointee.flags
        let yuv =
            flags & UInt64(AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_PAL) == 0
        return yuv && descriptor.pointee.nb_components >= 3 && descriptor.pointee.comp.0.depth > 8
            ? "format=yuv420p" : ""
    }

    /// HDR to SDR for a picture whose transfer is PQ (SMPTE ST 2084) or HLG (ARIB STD-B67), nil for others: the
    /// chain that ffmpeg's documentation and mpv's users run with the ffmpeg tool: to linear light (100 nits = 1.0),
    /// to BT.709 primaries in float RGB, Hable's curve without desaturation, then BT.709 transfer and matrix in
    /// limited range, 8-bit 4:2:0. The input's colour properties are named from the frame (BT.2020 when it says
    /// nothing, as HDR video is), so zimg never has to guess.
    static func toneMapFilters(for frame: AVFrame) -> String? {
        let transfer: String
        switch frame.color_trc {
        case AVCOL_TRC_SMPTE2084: transfer = "smpte2084"
        case AVCOL_TRC_ARIB_STD_B67: transfer = "arib-std-b67"
        default: return nil
        }
        let matrix =
            frame.colorspace == AVCOL_SPC_BT709
            ? "709" : frame.colorspace == AVCOL_SPC_BT2020_CL ? "2020_cl" : "2020_ncl"
        return toneMapFilters(
            transfer: transfer, matrix: matrix,
            primaries: frame.color_primaries == AVCOL_PRI_BT709 ? "709" : "2020",
            range: frame.color_range == AVCOL_RANGE_JPEG ? "full" : "limited",
            size: toneMapSize(width: Int(frame.width), height: Int(frame.height)))
    }

    /// The most pixels tone-mapped per picture: 1920 × 1080. The tonemap filter costs about 40 ms of one core per
    /// 1080p picture here, so a 4K HDR picture is made 1080p in the same zscale pass that linearises it (its aspect
    /// kept), which bounds the cost at that of 1080p; smaller pictures keep their size. nil: keep the size.
    static func toneMapSize(width: Int, height: Int) -> (width: Int, height: Int)? {
        let limit = 1920 * 1080
        guard width > 0, height > 0, width * height > limit else { return nil }
        let scale = (Double(limit) / Double(width * height)).squareRoot()
        // Even sizes, as 4:2:0 needs.
        return (Int(Double(width) * scale / 2) * 2, Int(Double(height) * scale / 2) * 2)
    }

    /// The tone-mapping chain for an input named in zimg's words (transfer `smpte2084` or `arib-std-b67`, matrix
    /// `2020_ncl`, primaries `2020`, range `limited` or `full`).
    /// `size`: the size to tone-map at (`toneMapSize`), nil to keep the picture's.
    static func toneMapFilters(
        transfer: String, matrix: String, primaries: String, range: String,
        size: (width: Int, height: Int)? = nil
    ) -> String {
        let resize = size.map { ":w=\($0.width):h=\($0.height)" } ?? ""
        return
            "zscale=tin=\(transfer):min=\(matrix):pin=\(primaries):rin=\(range):t=linear:npl=100\(resize),"
            + "format=gbrpf32le,zscale=p=709,tonemap=tonemap=hable:desat=0,zscale=t=709:m=709:r=limited,format=yuv420p"
    }

    private func makeGraph(for frame: AVFrame, shape: Shape) throws {
        freeGraph()
        try FilterLibrary.load()
        guard let graph = cast_avfilter_graph_alloc() else {
            throw MediaError.ffmpeg("avfilter_graph_alloc", status: cast_averror(ENOMEM))
        }
        self.graph = graph
        // As the ffmpeg tool: bicubic where swscale converts; the decoder's thread count for slice threads.
        graph.pointee.scale_sws_opts = av_strdup("flags=bicubic")
        graph.pointee.nb_threads = Decoder.threadCount
        let sar = frame.sample_aspect_ratio
        let aspect = sar.num > 0 && sar.den > 0 ? "\(sar.num)/\(sar.den)" : "0/1"
        let buffer =
            "buffer=video_size=\(frame.width)x\(frame.height):pix_fmt=\(Self.pixelFormatName(frame.format))"
            + ":time_base=\(timeBase.num)/\(timeBase.den):pixel_aspect=\(aspect)"
        var inputs: UnsafeMutablePointer<AVFilterInOut>?
        var outputs: UnsafeMutablePointer<AVFilterInOut>?
        defer {
            cast_avfilter_inout_free(&inputs)
            cast_avfilter_inout_free(&outputs)
        }
        let description = "\(buffer),\(shape.filters),buffersink"
        try checkFFmpeg(
            "\(streamName): avfilter_graph_parse_ptr(\(shape.filters))",
            cast_avfilter_graph_parse_ptr(graph, description, &inputs, &outputs, nil))
        for index in 0..<Int(graph.pointee.nb_filters) {
            guard let context = graph.pointee.filters[index], let filter = context.pointee.filter else {
                continue
            }
            switch String(cString: filter.pointee.name) {
            case "buffer": source = context
            case "buffersink": sink = context
            default: break
            }
        }
        try checkFFmpeg(
            "\(streamName): avfilter_graph_config(\(shape.filters))", cast_avfilter_graph_config(graph, nil))
        madeFor = shape
    }

    private static func pixelFormatName(_ format: Int32) -> String {
        av_get_pix_fmt_name(AVPixelFormat(format)).map { String(cString: $0) } ?? "\(format)"
    }

    private func freeGraph() {
        cast_avfilter_graph_free(&graph)
        source = nil
        sink = nil
        madeFor = nil
    }
}

extension VideoOrientation {
    /// The stream's display matrix (`AV_PKT_DATA_DISPLAYMATRIX`), as the ffmpeg tool reads it when it opens the input.
    init(stream: UnsafeMutablePointer<AVStream>) {
        var size: Int = 0
        guard let data = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size),
            size >= 9 * 4
        else {
            self = .upright
            return
        }
        let matrix = UnsafeRawPointer(data).withMemoryRebound(to: Int32.self, capacity: 9) {
            Array(UnsafeBufferPointer(start: $0, count: 9))
        }
        self.init(displayMatrix: matrix)
    }
}

extension VideoOutput {
    /// Pictures go to a screen (a window of ours or of the application, or the full screen): colour is converted
    /// for it.
    var isDisplay: Bool {
        switch self {
        case .window, .fullscreen, .hosted: return true
        case .none, .framemd5: return false
        }
    }
}
