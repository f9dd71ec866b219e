import CastBase
import CastMedia
import CastProtocol
import Foundation

extension MoviePlayerController {
    /// Everything that changes: the value of the player's mutex.
    struct State {
        var contentURL: URL?
        var shouldAutoplay = true
        var allowsAirPlay = true
        var initialPlaybackTime: TimeInterval = -1
        /// Where a movie starts by `initialPlaybackTime`: 0 for a negative, NaN or infinite value.
        var movieStart: Double { initialPlaybackTime.isFinite ? max(initialPlaybackTime, 0) : 0 }
        var endPlaybackTime: TimeInterval = -1
        /// The rate playback runs at while playing.
        var rate = 1.0
        var movie = Movie()
        var playbackState: PlaybackState = .stopped
        /// What the user asked for, playing or paused: a move or a load carries it to the new playback.
        var intent: Intent = .paused
        var isAirPlayVideoActive = false
        /// Where the loaded movie plays; nil when none is loaded.
        var playback: (any MoviePlayback)?
        /// The members of the group whose file just ended, for the next file on the same selection (a queue keeps one
        /// group); closed when anything else plays next.
        var carriedGroup: CarriedGroup?
        /// Bumped whenever `playback` is replaced: reports of older playbacks are ignored.
        var generation = 0
        /// The current playback's clock has started (its first `.playing`): its positions count from here on.
        var clockStarted = false
        var position = PositionEstimate()
        /// A position set before loading: where the next load begins.
        var pendingStart: Double?
        /// Where the movie plays (the receivers: one, or a group), the route that failed, and a reconnection in
        /// progress (the route rules).
        var route = RouteRules<[ReceiverDescription]>()
        var subscribers: [UUID: AsyncStream<MoviePlayerEvent>.Continuation] = [:]
        /// Paused because another player took the audio (engine players that yield by interruption).
        var interrupted = false
        /// The output level, 0...1.
        var volume = 1.0
        var scalingMode = ScalingMode.aspectFit
        var subtitleLanguage: String?
        var audioLanguage: String?
        var isFullscreen = false
        /// The outputs the local playback was started with (`view` changes compare against them).
        var shownOutputs: MoviePlayerController.Outputs?
        var controlStyle = ControlStyle.default
        var repeatMode = RepeatMode.none
        var movieSourceType = SourceType.unknown
        /// The user set `movieSourceType`: it is not replaced by what is detected.
        var sourceTypeGiven = false
        /// Scrubbing: the direction, what to go back to, and the timer that moves the position.
        var seeking: Seeking?
        /// Makes thumbnails of `contentURL`; opened on the first request, dropped when the URL changes.
        var thumbnailer: Thumbnailer?

        /// The position now, within the movie.
        var currentTime: Double {
            let seconds = max(position.now, 0)
            return movie.duration > 0 ? min(seconds, movie.duration) : seconds
        }

        /// Where the next load begins: a position set while unloaded, else `initialPlaybackTime`, else 0. Taken: a
        /// position set while unloaded counts once.
        mutating func takeStartPosition() -> Double {
            defer { pendingStart = nil }
            return pendingStart ?? movieStart
        }
    }

    /// A scrub in progress (`beginSeekingForward/Backward`).
    struct Seeking {
        var forward: Bool
        var resumePlaying: Bool
        var timer: any DispatchSourceTimer
    }

    /// Playing or paused, as asked.
    enum Intent {
        case playing
        case paused
    }

    /// What is known about the loaded movie: the facts its playback's events told (the one reducer every consumer
    /// of events shares), what was announced of them, and its logs.
    struct Movie {
        var facts = PlaybackSnapshot()
        var durationAnnounced = false
        var naturalSizeAnnounced = false
        var mediaTypesAnnounced = false
        /// One entry per playback of the movie (a load, a restart, a move), the current one last.
        var accessLog: [AccessLogEntry] = []
        /// Which entry of `accessLog` each playback's reports update, by the playback's generation: a playback that
        /// was stopped or replaced still brings its closing entry.
        var accessLogIndex: [Int: Int] = [:]
        /// When the current playback was last asked for its entry.
        var accessLogAsked: ContinuousClock.Instant?
        var errorLog: [ErrorLogEntry] = []
        /// The movie was opened and could start (its load state became `.playable`) since it was last loaded.
        var prepared = false

        var loadState: LoadState { facts.loadState }
        var duration: TimeInterval { facts.duration ?? 0 }
        var naturalSize: CGSize { facts.naturalSize.map { CGSize(width: $0.width, height: $0.height) } ?? .zero }
        var mediaTypes: MediaTypes {
            var mask: MediaTypes = []
            if facts.mediaTypes?.contains(.audio) == true { mask.insert(.audio) }
            if facts.mediaTypes?.contains(.video) == true { mask.insert(.video) }
            return mask
        }
        var readyForDisplay: Bool { facts.readyForDisplay }
        /// The media time buffered up to (the last `buffered` event); nil until one arrives.
        var bufferedUpTo: Double? { facts.playableDuration }
        var timedMetadata: TimedMetadata? { facts.metadata }
        var tracks: [MediaTrack] { facts.tracks ?? [] }

        /// Starts the access log entry of the playback of `generation` (dated now; the playback fills it in).
        mutating func beginAccessLogEntry(generation: Int) {
            accessLogIndex[generation] = accessLog.count
            accessLog.append(AccessLogEntry(playbackStartDate: Date().timeIntervalSince1970))
            accessLogAsked = nil
        }

        /// The playback of `generation` reported its entry: it replaces what was known of it. A playback without an
        /// entry of its own (a reconnection) gets one when it is the current playback.
        mutating func updateAccessLog(_ entry: AccessLogEntry, generation: Int, current: Int) {
            if let index = accessLogIndex[generation] {
                accessLog[index] = entry
            } else if generation == current {
                accessLogIndex[generation] = accessLog.count
                accessLog.append(entry)
            }
        }
    }

    /// The position as last reported, running on at the rate while playing, so that reading it needs no round trip
    /// to the engine or the receiver.
    struct PositionEstimate {
        var seconds: Double = 0
        var at: ContinuousClock.Instant = .now
        var running = false
        var rate = 1.0

        init(seconds: Double = 0) { self.seconds = seconds }

        /// The position now.
        var now: Double {
            guard running else { return seconds }
            let elapsed = ContinuousClock.now - at
            let elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
            return seconds + elapsedSeconds * rate
        }

        /// Restarts the estimate from where it is now, running or standing.
        mutating func rebase(running: Bool) {
            seconds = now
            at = .now
            self.running = running
        }

        /// A reported position.
        mutating func set(_ seconds: Double) {
            self.seconds = seconds
            at = .now
        }
    }
}
