public import CastMedia
public import CastProtocol
public import Foundation

/// One change of a movie player, as posted on `NotificationCenter.default` and yielded by
/// `MoviePlayerController.events()`: the same values, in the same order.
public enum MoviePlayerEvent: Sendable {
    /// `playbackState` changed (`.moviePlayerPlaybackStateDidChange`).
    case playbackStateDidChange(PlaybackState)
    /// `loadState` changed (`.moviePlayerLoadStateDidChange`).
    case loadStateDidChange(LoadState)
    /// Playback finished (`.moviePlayerPlaybackDidFinish`); `error` is set for `.playbackError`.
    case playbackDidFinish(reason: FinishReason, error: CastError?)
    /// `isAirPlayVideoActive` changed (`.moviePlayerIsAirPlayVideoActiveDidChange`).
    case isAirPlayVideoActiveDidChange(Bool)
    /// `readyForDisplay` changed (`.moviePlayerReadyForDisplayDidChange`).
    case readyForDisplayDidChange(Bool)
    /// The movie's duration became known (`.movieDurationAvailable`).
    case durationAvailable(TimeInterval)
    /// The movie's natural size became known (`.movieNaturalSizeAvailable`).
    case naturalSizeAvailable(CGSize)
    /// The movie's media types became known (`.movieMediaTypesAvailable`).
    case mediaTypesAvailable(MoviePlayerController.MediaTypes)
    /// The movie's metadata arrived or changed (`.moviePlayerTimedMetadataUpdated`).
    case timedMetadataUpdated(TimedMetadata)
    /// A requested thumbnail is ready, or failed (`.moviePlayerThumbnailImageRequestDidFinish`).
    case thumbnailRequestDidFinish(time: TimeInterval, result: Result<Thumbnail, CastError>)
    /// Full screen is about to begin (`.moviePlayerWillEnterFullscreen`).
    case willEnterFullscreen(FullscreenAnimation)
    /// Full screen began (`.moviePlayerDidEnterFullscreen`).
    case didEnterFullscreen(FullscreenAnimation)
    /// Full screen is about to end (`.moviePlayerWillExitFullscreen`).
    case willExitFullscreen(FullscreenAnimation)
    /// Full screen ended (`.moviePlayerDidExitFullscreen`).
    case didExitFullscreen(FullscreenAnimation)
    /// `contentURL` was set to another movie (`.moviePlayerNowPlayingMovieDidChange`).
    case nowPlayingMovieDidChange(URL?)
    /// `scalingMode` changed (`.moviePlayerScalingModeDidChange`).
    case scalingModeDidChange(ScalingMode)
    /// The movie's source type, unknown until now, was detected when it loaded (`.movieSourceTypeAvailable`).
    case sourceTypeAvailable(MoviePlayerController.SourceType)

    /// The notification that carries this event.
    public var notificationName: Notification.Name {
        switch self {
        case .playbackStateDidChange: .moviePlayerPlaybackStateDidChange
        case .loadStateDidChange: .moviePlayerLoadStateDidChange
        case .playbackDidFinish: .moviePlayerPlaybackDidFinish
        case .isAirPlayVideoActiveDidChange: .moviePlayerIsAirPlayVideoActiveDidChange
        case .readyForDisplayDidChange: .moviePlayerReadyForDisplayDidChange
        case .durationAvailable: .movieDurationAvailable
        case .naturalSizeAvailable: .movieNaturalSizeAvailable
        case .mediaTypesAvailable: .movieMediaTypesAvailable
        case .timedMetadataUpdated: .moviePlayerTimedMetadataUpdated
        case .thumbnailRequestDidFinish: .moviePlayerThumbnailImageRequestDidFinish
        case .willEnterFullscreen: .moviePlayerWillEnterFullscreen
        case .didEnterFullscreen: .moviePlayerDidEnterFullscreen
        case .willExitFullscreen: .moviePlayerWillExitFullscreen
        case .didExitFullscreen: .moviePlayerDidExitFullscreen
        case .nowPlayingMovieDidChange: .moviePlayerNowPlayingMovieDidChange
        case .scalingModeDidChange: .moviePlayerScalingModeDidChange
        case .sourceTypeAvailable: .movieSourceTypeAvailable
        }
    }

    /// The notification's userInfo: the finish reason and error for a finish, nothing otherwise (the new values are
    /// the player's properties, as in the seeds).
    var userInfo: [AnyHashable: Any]? {
        switch self {
        case .playbackDidFinish(let reason, let error):
            var info: [AnyHashable: Any] = [MoviePlayerController.finishReasonUserInfoKey: reason]
            if let error { info[MoviePlayerController.errorUserInfoKey] = error }
            return info
        case .willEnterFullscreen(let animation), .didEnterFullscreen(let animation),
            .willExitFullscreen(let animation),
            .didExitFullscreen(let animation):
            return [
                MoviePlayerController.fullscreenAnimationDurationUserInfoKey: animation.duration,
                MoviePlayerController.fullscreenAnimationCurveUserInfoKey: animation.curve,
            ]
        case .thumbnailRequestDidFinish(let time, let result):
            // The time key is the actual time of the frame in the image, as the seeds say (a key frame's time may be
            // well before the one asked for); for a failure, the time asked for.
            var info: [AnyHashable: Any] = [:]
            switch result {
            case .success(let image):
                info[MoviePlayerController.thumbnailTimeUserInfoKey] = image.time
                info[MoviePlayerController.thumbnailImageUserInfoKey] = image
            case .failure(let error):
                info[MoviePlayerController.thumbnailTimeUserInfoKey] = time
                info[MoviePlayerController.thumbnailErrorUserInfoKey] = error
            }
            return info
        default:
            return nil
        }
    }
}

extension Notification.Name {
    /// A movie player's `playbackState` changed. Object: the player.
    public static let moviePlayerPlaybackStateDidChange = Notification.Name("MoviePlayerPlaybackStateDidChange")
    /// A movie player's `loadState` changed. Object: the player.
    public static let moviePlayerLoadStateDidChange = Notification.Name("MoviePlayerLoadStateDidChange")
    /// A movie finished. Object: the player; userInfo: `MoviePlayerController.finishReasonUserInfoKey` (a
    /// `FinishReason`) and, for `.playbackError`, `MoviePlayerController.errorUserInfoKey` (a `CastError`).
    public static let moviePlayerPlaybackDidFinish = Notification.Name("MoviePlayerPlaybackDidFinish")
    /// A movie player's `isAirPlayVideoActive` changed. Object: the player.
    public static let moviePlayerIsAirPlayVideoActiveDidChange = Notification.Name(
        "MoviePlayerIsAirPlayVideoActiveDidChange")
    /// A movie player's `readyForDisplay` changed. Object: the player.
    public static let moviePlayerReadyForDisplayDidChange = Notification.Name("MoviePlayerReadyForDisplayDidChange")
    /// A movie's `duration` became known. Object: the player.
    public static let movieDurationAvailable = Notification.Name("MovieDurationAvailable")
    /// A movie's `naturalSize` became known. Object: the player.
    public static let movieNaturalSizeAvailable = Notification.Name("MovieNaturalSizeAvailable")
    /// A movie's `movieMediaTypes` became known. Object: the player.
    public static let movieMediaTypesAvailable = Notification.Name("MovieMediaTypesAvailable")
    /// A movie's metadata arrived or changed (`timedMetadata`). Object: the player.
    public static let moviePlayerTimedMetadataUpdated = Notification.Name("MoviePlayerTimedMetadataUpdated")
    /// A thumbnail asked for with `requestThumbnailImages(atTimes:timeOption:)` is ready or failed. Object: the player;
    /// userInfo: `thumbnailTimeUserInfoKey` and `thumbnailImageUserInfoKey` or `thumbnailErrorUserInfoKey`.
    public static let moviePlayerThumbnailImageRequestDidFinish = Notification.Name(
        "MoviePlayerThumbnailImageRequestDidFinish")
    /// A movie player is about to enter full screen. Object: the player; userInfo: the animation keys.
    public static let moviePlayerWillEnterFullscreen = Notification.Name("MoviePlayerWillEnterFullscreen")
    /// A movie player entered full screen. Object: the player; userInfo: the animation keys.
    public static let moviePlayerDidEnterFullscreen = Notification.Name("MoviePlayerDidEnterFullscreen")
    /// A movie player is about to leave full screen. Object: the player; userInfo: the animation keys.
    public static let moviePlayerWillExitFullscreen = Notification.Name("MoviePlayerWillExitFullscreen")
    /// A movie player left full screen. Object: the player; userInfo: the animation keys.
    public static let moviePlayerDidExitFullscreen = Notification.Name("MoviePlayerDidExitFullscreen")
    /// MPMoviePlayerNowPlayingMovieDidChangeNotification: `contentURL` now names another movie.
    public static let moviePlayerNowPlayingMovieDidChange = Notification.Name("MoviePlayerNowPlayingMovieDidChange")
    /// MPMoviePlayerScalingModeDidChangeNotification: `scalingMode` changed.
    public static let moviePlayerScalingModeDidChange = Notification.Name("MoviePlayerScalingModeDidChange")
    /// MPMovieSourceTypeAvailableNotification: `movieSourceType` was unknown and is now known.
    public static let movieSourceTypeAvailable = Notification.Name("MovieSourceTypeAvailable")
    /// `CastRoute.selection` (or `selected`, its one-receiver spelling) changed. Object: nil.
    public static let castRouteDidChange = Notification.Name("CastRouteDidChange")
}

/// The animation of a change to or from full screen, as the full-screen notifications carry it.
public struct FullscreenAnimation: Sendable, Equatable {
    /// Seconds (0 when not animated).
    public var duration: TimeInterval
    /// The curve's name ("easeInOut").
    public var curve: String
}
