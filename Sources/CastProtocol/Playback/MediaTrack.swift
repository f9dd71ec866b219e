/// One audio or subtitle track of the media that plays, as the `tracks` event and `status` list them, so that a sender
/// can offer a choice (`--audio-lang`, `cast subtitles`).
public struct MediaTrack: Codable, Sendable, Equatable {
    /// What the track carries.
    public enum Kind: String, Codable, Sendable {
        /// Sound.
        case audio
        /// Subtitles: a track of the media, or the sidecar file sent with it (`index` -1).
        case subtitle
    }

    /// The track's stream number in the media (as ffprobe counts); -1 for the sidecar subtitle file.
    public var index: Int
    /// Audio or subtitles.
    public var kind: Kind
    /// Its language tag (ISO 639), when the media gives one.
    public var language: String?
    /// Its title, when the media gives one.
    public var title: String?
    /// FFmpeg's codec name: `aac`, `ac3`, `subrip`, `ass`, `hdmv_pgs_subtitle`, `dvd_subtitle`, …
    public var codec: String
    /// Whether it plays (audio) or shows (subtitles) now.
    public var selected: Bool

    /// Creates a track.
    public init(index: Int, kind: Kind, language: String?, title: String?, codec: String, selected: Bool) {
        self.index = index
        self.kind = kind
        self.language = language
        self.title = title
        self.codec = codec
        self.selected = selected
    }

    /// The most tracks one event lists (a Blu-ray rip has a few dozen subtitle tracks at most).
    public static let maximumCount = 64
}
