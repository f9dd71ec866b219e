/// How a receiver's window fits pictures whose shape differs from the screen's (the seeds' MPMovieScalingMode); the
/// wire words are the raw values.
public enum VideoScalingMode: String, Codable, Sendable, CaseIterable {
    /// Natural size, centred, cropped where larger than the screen.
    case none
    /// As large as fits whole; black bars (the default).
    case aspectFit
    /// As small as covers the screen; the overflow is cropped.
    case aspectFill
    /// Stretched to the screen's shape.
    case fill
}
