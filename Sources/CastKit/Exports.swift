public import CastMedia
public import CastProtocol
public import CastSender

// The types a CastKit program names, under CastKit's name too, so that `import CastKit` alone is enough (the seeds'
// MPMoviePlaybackState, MPMovieLoadState, MPMovieFinishReason... are MediaPlayer's own). They are defined in the
// modules that share them with castd and `cast`: the protocol (CastProtocol), the engine (CastMedia) and the sender's
// core (CastSender).
//
// Only these: CastKit does not re-export CastSender (no `@_exported`), so that its machinery (the connection and its
// state machine, `RemotePlayback`, `MediaFile`, the speaker's processes) is not CastKit's API. A program that wants the
// sender's core itself (`GroupPlayback`, as `cast` uses it) imports CastSender by name. scripts/check-castkit-api
// checks that a program importing CastKit alone sees these names and not the machinery.

/// A receiver a program can pick: found by `ReceiverBrowser`, or given as HOST:PORT (`CastRoute.selection`).
public typealias ReceiverDescription = CastSender.ReceiverDescription
/// The receivers in sight: a snapshot (`receivers`), one by the user's words (`resolve`), or live (`updates`).
public typealias ReceiverBrowser = CastSender.ReceiverBrowser
/// A change among the receivers in sight: appeared, updated, disappeared (`ReceiverBrowser.updates()`).
public typealias ReceiverBrowserEvent = CastSender.ReceiverBrowserEvent
/// Pairing with a receiver by its PIN or password, as `cast pair` does; the pairings kept, and unpairing.
public typealias Pairing = CastSender.Pairing
/// Every error CastKit reports: its `kind` (`.notAuthorised`, `.playback`, ...) and a message for people.
public typealias CastError = CastSender.CastError

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
