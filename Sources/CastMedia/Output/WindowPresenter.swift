internal import CFFmpeg

/// Presents a stream's frames in the process's video window (`WindowOutput`): holds the window for the stream's
/// lifetime and hands each frame over at its display time.
final class WindowPresenter: VideoPresenter {
    private let output: WindowOutput
    private let token: Int
    private var closed = false

    /// Acquires the window in `mode`; throws `MediaError` when no display can be opened.
    init(mode: WindowOutput.DisplayMode, scaling: ScalingMode, output: WindowOutput = .shared) throws {
        self.output = output
        self.token = try output.acquire(mode: mode, scaling: scaling)
    }

    deinit { close() }

    /// Hands the SDL thread its own reference to the picture (the decoder's buffers are reference-counted, so
    /// nothing is copied) and returns at once.
    func present(_ frame: Frame) throws {
        output.show(try frame.reference())
    }

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
