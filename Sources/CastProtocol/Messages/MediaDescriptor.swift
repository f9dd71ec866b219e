/// Media the sender serves over a media connection (the receiver pulls it by byte ranges).
public struct MediaDescriptor: Codable, Sendable, Equatable {
    /// Total size in bytes; nil for a stream of unknown length (standard input, a pipe).
    public var size: Int64?
    /// Whether the receiver may read at any offset; false for standard input and pipes (reads must be in order).
    public var seekable: Bool
    /// A file name with its extension, which helps FFmpeg probe.
    public var nameHint: String?

    /// Creates a descriptor.
    public init(size: Int64?, seekable: Bool, nameHint: String?) {
        self.size = size
        self.seekable = seekable
        self.nameHint = nameHint
    }
}
