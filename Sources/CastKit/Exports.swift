public import CastMedia
public import CastProtocol
@_exported public import CastSender

// The types a CastKit program names, under CastKit's name too, so that `import CastKit` alone is enough (the seeds'
// MPMoviePlaybackState, MPMovieLoadState, MPMovieFinishReason... are MediaPlayer's own). They are defined in the
// modules that share them with castd: the protocol (CastProtocol) and the engine (CastMedia).

/// `playbackState`: stopped, playing, paused, interrupted, seeking forward or backward (MPMoviePlaybackState).
public typealias PlaybackState = CastProtocol.PlaybackState
/// `loadState`: playable, playthrough OK, stalled (MPMovieLoadState).
public typealias LoadState = CastProtocol.LoadState
/// Why playback finished (MPMovieFinishReason).
public typealias FinishReason = CastProtocol.FinishReason
/// A timed metadata item (MPTimedMetadata).
public typealias TimedMetadata = CastProtocol.TimedMetadata
/// One entry of `accessLog` (MPMovieAccessLogEvent).
public typealias AccessLogEntry = CastProtocol.AccessLogEntry
/// One entry of `errorLog` (MPMovieErrorLogEvent).
public typealias ErrorLogEntry = CastProtocol.ErrorLogEntry
/// How pictures fit the screen (MPMovieScalingMode).
public typealias ScalingMode = CastMedia.ScalingMode
/// A thumbnail image: PNG bytes, size and the frame's time.
public typealias Thumbnail = CastMedia.Thumbnail
/// Exact frame or nearest key frame, for thumbnails (MPMovieTimeOption).
public typealias ThumbnailTimeOption = CastMedia.ThumbnailTimeOption
/// Video drawn into the application's own X11 window (`MoviePlayerController.Outputs.Video.hosted`).
public typealias HostedVideo = CastMedia.HostedVideo
/// An opaque colour (`MovieView.backgroundColor`, `MovieBackgroundView.backgroundColor`).
public typealias VideoColor = CastMedia.VideoColor
