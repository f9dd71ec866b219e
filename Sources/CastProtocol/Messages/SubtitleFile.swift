/// A sidecar subtitle file (SRT, ASS/SSA, WebVTT …) the sender serves with the media.
public struct SubtitleFile: Codable, Sendable, Equatable {
    /// Its size in bytes, 1...`maximumSize`: the receiver reads it whole before playback starts.
    public var size: Int64
    /// Its file name with the extension, which helps FFmpeg tell the format.
    public var nameHint: String?

    /// The largest subtitle file: a film's SRT is about 100 KB, a karaoke-styled ASS a few MB.
    public static let maximumSize: Int64 = 8 << 20

    /// Creates a descriptor.
    public init(size: Int64, nameHint: String?) {
        self.size = size
        self.nameHint = nameHint
    }
}
