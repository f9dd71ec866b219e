internal import CFFmpeg
import CastProtocol

/// Presents a stream's frames in the process's video window (`WindowOutput`): holds the window for the stream's
/// lifetime and hands each frame over at its display time.
final class WindowPresenter: VideoPresenter {
    private let output: WindowOutput
    private let token: Int
    private var closed = false
    /// The stream shown, named in errors.
    private let streamName: String
    /// Lines shown under the picture (empty: none).
    private let caption: [String]
    /// The pixel format of the last frame that was checked: the window can show it, as it is or converted.
    private var shownFormat: Int32?

    /// Acquires the window in `mode`; throws `MediaError` when no display can be opened.
    init(
        mode: WindowOutput.DisplayMode, scaling: ScalingMode, streamName: String, caption: [String] = [],
        log: MediaLog = .silent, output: WindowOutput = .shared
    ) throws {
        self.output = output
        self.streamName = streamName
        self.caption = caption
        self.token = try output.acquire(mode: mode, scaling: scaling, log: log)
    }

    deinit { close() }

    /// Hands the SDL thread its own reference to the picture (the decoder's buffers are reference-counted, so
    /// nothing is copied) and returns at once.
    func present(_ frame: Frame) throws {
        let format = frame.pointer.pointee.format
        if format != shownFormat {
            // A picture neither SDL nor swscale can take would leave the window blank while playback "succeeds".
            let pixels = AVPixelFormat(format)
            guard WindowRenderer.sdlFormat(for: pixels) != nil || sws_isSupportedInput(pixels) > 0 else {
                let name = av_get_pix_fmt_name(pixels).map { String(cString: $0) } ?? "\(format)"
                throw MediaError.other("\(streamName): the window cannot show pixel format \(name)")
            }
            shownFormat = format
        }
        output.show(try frame.reference(), caption: caption)
    }

    func showCursor(_ cursor: MirrorCursor) { output.showCursor(cursor) }

    /// Back to the idle screen, and gives the window up (the last holder's release closes it).
    func close() {
        guard !closed else { return }
        closed = true
        output.showIdle()
        output.release(token)
    }
}

extension Frame {
    /// A new frame that refers to the same picture buffers (av_frame_ref): a second owner for another thread.
    func reference() throws -> Frame {
        let copy = Frame()
        try checkFFmpeg("av_frame_ref", av_frame_ref(copy.pointer, pointer))
        return copy
    }
}
