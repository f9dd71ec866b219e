import CastProtocol

/// A place where the video output thread presents frames, each at its display time (shairport's `audio_output`,
/// for pictures). One backend per file: `FrameMD5Writer`, `WindowPresenter`.
///
/// Called from the video output thread only, in order: any number of `present`, then `close` once.
protocol VideoPresenter: AnyObject {
    /// Shows `frame` now. The presenter must not keep `frame` past the call: it takes its own reference if it needs
    /// the picture later.
    func present(_ frame: Frame) throws
    /// Playback jumped (a seek): the next frame does not follow the one before.
    func restart()
    /// A mirrored sender's pointer moved or changed shape: drawn over the picture where the presenter can.
    func showCursor(_ cursor: MirrorCursor)
    /// Playback of this stream ended (to the end, stopped or failed): release what the presenter holds.
    func close()
}

extension VideoPresenter {
    /// Most presenters show each frame on its own: nothing to forget.
    func restart() {}
    /// Most presenters have no pointer to draw.
    func showCursor(_ cursor: MirrorCursor) {}
}

extension FrameMD5Writer: VideoPresenter {
    func present(_ frame: Frame) throws { try write(frame) }
    /// The file is flushed after every line and closed by `deinit`.
    func close() {}
}
