internal import CASS
internal import CFFmpeg
import Foundation
import Synchronization

/// The subtitles of one playback, burnt into each video frame before any presenter sees it, so that the window, full
/// screen and framemd5 show the same picture (as `ffmpeg -vf subtitles=…` does).
///
/// Text events go to a libass track and are drawn by libass's renderer at the frame's time; bitmap events (PGS, DVB,
/// VobSub) are kept here and drawn when their interval holds the frame's time.
///
/// Thread-safety: the demux thread adds events and flushes on a seek while the video output thread draws; libass's
/// library, renderer and track are not thread-safe, so they and `pictures` are used only under `lock`.
final class SubtitleOverlay: @unchecked Sendable {
    /// Serialises every use of libass's objects and of the state below.
    private let lock = Mutex(())
    private let library: OpaquePointer
    private let renderer: OpaquePointer
    private let track: UnsafeMutablePointer<ASS_Track>
    private var frameSize = (width: 0, height: 0)
    /// Bitmap events in the order they arrived (by start time in a well-formed stream).
    private var pictures: [(event: [SubtitlePicture], start: Int64, end: Int64?, canvas: (width: Int, height: Int))] =
        []
    private var pictureBytes = 0
    /// Whether a frame in a format the canvas cannot draw on was reported already.
    private var reportedFormat = false
    /// Where that is reported.
    private let log: MediaLog

    /// The most text events and bitmap bytes kept at once: a film has about 2,000 lines; a hostile stream may not
    /// grow the process without bound (the oldest bitmaps are dropped first; further text is ignored).
    static let textEvents = 100_000
    static let bitmapBytes = 64 << 20

    /// An overlay for a stream whose codec gave `header` (the ASS styles; nil: libass's defaults), with `fonts`
    /// (name, bytes) from the container's attachments.
    init(header: String?, fonts: [(name: String, data: [UInt8])] = [], log: MediaLog = .silent) throws {
        self.log = log
        guard let library = ass_library_init() else {
            throw MediaError.ffmpeg("ass_library_init", status: cast_averror(ENOMEM))
        }
        cast_ass_route_messages(library)
        ass_set_extract_fonts(library, 1)
        for font in fonts {
            font.data.withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) {
                    ass_add_font(library, font.name, $0.baseAddress, Int32($0.count))
                }
            }
        }
        guard let renderer = ass_renderer_init(library) else {
            ass_library_done(library)
            throw MediaError.ffmpeg("ass_renderer_init", status: cast_averror(ENOMEM))
        }
        // As FFmpeg's subtitles filter: fontconfig finds the fonts, libass's own default family.
        ass_set_fonts(renderer, nil, nil, Int32(ASS_FONTPROVIDER_AUTODETECT.rawValue), nil, 1)
        // FFmpeg's `subtitles` filter lays text out with libass's simple shaper (FriBidi: bidirectional text and
        // Arabic joining, no OpenType features such as kerning or Indic shaping): the same here, so that the burnt-in
        // pictures match `ffmpeg -vf subtitles=…` bit for bit (the complex shaper moves glyphs by kerning).
        ass_set_shaper(renderer, ASS_SHAPING_SIMPLE)
        guard let track = ass_new_track(library) else {
            ass_renderer_done(renderer)
            ass_library_done(library)
            throw MediaError.ffmpeg("ass_new_track", status: cast_averror(ENOMEM))
        }
        if var bytes = header.map({ Array($0.utf8CString) }), bytes.count > 1 {
            ass_process_codec_private(track, &bytes, Int32(bytes.count - 1))
        }
        self.library = library
        self.renderer = renderer
        self.track = track
    }

    deinit {
        ass_free_track(track)
        ass_renderer_done(renderer)
        ass_library_done(library)
    }

    /// Adds one decoded event.
    func add(_ event: SubtitleEvent) {
        lock.withLock { _ in
            switch event {
            case .text(let lines, let start, let duration):
                for line in lines where track.pointee.n_events < Self.textEvents {
                    var bytes = Array(line.utf8CString)
                    ass_process_chunk(track, &bytes, Int32(bytes.count - 1), start, duration)
                }
            case .pictures(let event, let start, let end, let canvas):
                // Each bitmap event is a whole screen (a DVD, PGS or DVB display set): it replaces whatever is shown
                // when it begins, so an event without an end (or with DVD's "forever") lasts until the next one;
                // PGS and DVB clear the screen with an empty event.
                for index in pictures.indices
                where pictures[index].start <= start && (pictures[index].end ?? .max) > start {
                    pictures[index].end = start
                }
                guard !event.isEmpty else { return }
                pictures.append((event, start, end, canvas))
                pictureBytes += event.reduce(0) { $0 + $1.indices.count }
                while pictureBytes > Self.bitmapBytes, pictures.count > 1 {
                    pictureBytes -= pictures.removeFirst().event.reduce(0) { $0 + $1.indices.count }
                }
            }
        }
    }

    /// Forgets every event: after a seek the demuxer delivers them again from the new position.
    func flush() {
        lock.withLock { _ in
            ass_flush_events(track)
            pictures.removeAll()
            pictureBytes = 0
        }
    }

    /// Draws what is shown at `milliseconds` into `frame`, copying its picture first when the decoder still shares it
    /// (a reference frame). A frame nothing is shown on is left as it is, bit for bit.
    func burn(into frame: Frame, at milliseconds: Int64) throws {
        try lock.withLock { _ in
            let f = frame.pointer
            let size = (width: Int(f.pointee.width), height: Int(f.pointee.height))
            guard size.width > 0, size.height > 0 else { return }
            if size != frameSize {
                frameSize = size
                // As FFmpeg's subtitles filter: the picture is both the frame and the storage (borders, blur and
                // scaled shadows are measured in its pixels).
                ass_set_frame_size(renderer, Int32(size.width), Int32(size.height))
                ass_set_storage_size(renderer, Int32(size.width), Int32(size.height))
            }
            var changed: Int32 = 0
            let images = track.pointee.n_events > 0 ? ass_render_frame(renderer, track, milliseconds, &changed) : nil
            let shown = pictures.filter { $0.start <= milliseconds && milliseconds < ($0.end ?? .max) }
            guard images != nil || !shown.isEmpty else { return }
            guard let format = av_pix_fmt_desc_get(AVPixelFormat(rawValue: f.pointee.format))?.pointee,
                SubtitleCanvas.isPlanarYUV8(format)
            else {
                if !reportedFormat {
                    reportedFormat = true
                    let name = av_get_pix_fmt_name(AVPixelFormat(rawValue: f.pointee.format)).map {
                        String(cString: $0)
                    }
                    log("subtitles are not drawn on \(name ?? "unknown") pictures")
                }
                return
            }
            try checkFFmpeg("av_frame_make_writable", av_frame_make_writable(f))
            guard let canvas = SubtitleCanvas(frame: f) else { return }
            for shownEvent in shown {
                let source = shownEvent.canvas
                let xScale = source.width > 0 ? Double(size.width) / Double(source.width) : 1
                let yScale = source.height > 0 ? Double(size.height) / Double(source.height) : 1
                for picture in shownEvent.event { canvas.blend(picture, xScale: xScale, yScale: yScale) }
            }
            var image = images
            while let i = image?.pointee {
                if let bitmap = i.bitmap, i.w > 0, i.h > 0 {
                    canvas.blend(
                        mask: bitmap, stride: Int(i.stride), width: Int(i.w), height: Int(i.h), x: Int(i.dst_x),
                        y: Int(i.dst_y), colour: i.color)
                }
                image = i.next
            }
        }
    }
}
