import CastMedia
import CastProtocol

/// Media castd serves to the engine's reads, in a decoder worker (`MediaReadServer`) or in castd: a sender's file over
/// its media connection (`RemoteSource`), or a picture an AirPlay client sent, held in memory (`MemorySource`).
///
/// Thread-safety: as `MediaSource`: one reader thread reads and seeks; `cancel` may come from any thread.
protocol ServedMedia: MediaSource {
    /// Reads up to `count` bytes at the current position as `read(into:)` does, handing `body` a view of them (valid
    /// only inside `body`) so that castd passes them on to its worker without copying them first; an empty view at the
    /// end of the media.
    func withBytes<Result>(upTo count: Int, _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result
    /// A reader of the play request's subtitle file `file`, nil when this media has none to serve.
    func subtitles(_ file: SubtitleFile) -> (any ServedMedia)?
}

extension RemoteSource: ServedMedia {
    func subtitles(_ file: SubtitleFile) -> (any ServedMedia)? { subtitleReader(file) }
}

extension MemorySource: ServedMedia {
    /// A picture has no subtitle file.
    func subtitles(_ file: SubtitleFile) -> (any ServedMedia)? { nil }
}
