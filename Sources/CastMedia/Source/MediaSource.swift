/// Where the engine reads bytes from. Implemented by the receiver over the network (a media connection) and by files.
///
/// The engine calls `read` and `seek` from its own demux thread, one call at a time; `cancel` may come from any
/// thread while a `read` is blocked.
public protocol MediaSource: AnyObject, Sendable {
    /// Reads up to `buffer.count` bytes at the current position into `buffer`; returns 0 at end of input.
    /// May block. Throws on failure.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
    /// Seeks to an absolute byte offset; only called when `isSeekable`.
    func seek(to offset: Int64) throws
    /// Total size in bytes when known.
    var size: Int64? { get }
    /// Whether `seek(to:)` may be called.
    var isSeekable: Bool { get }
    /// A name for FFmpeg's probing (file name with extension), may be nil.
    var nameHint: String? { get }
    /// Asks a blocked `read` to return (by throwing or returning 0) soon. Called by `Player.stop()`;
    /// the default does nothing, which is right for sources whose reads never block for long.
    func cancel()
}

extension MediaSource {
    /// Reads of this source never block for long: nothing to cancel.
    public func cancel() {}
}
