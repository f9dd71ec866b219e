import CastBase
public import CastProtocol
public import Foundation
import Synchronization

/// Plays a movie file, locally or on the selected receiver, with the semantics of the seeds' movie player
/// (MPMoviePlayerController): the same properties, defaults and notifications, with AirPlay replaced by Cast
/// receivers. Only one movie player plays at a time: one starting to play stops the one that played.
///
/// Nothing is loaded until `prepareToPlay()` or `play()`. With a route selected (`CastRoute.selected`) and
/// `allowsAirPlay` true the movie plays on the receiver; toggling either moves it, at its position and in its
/// playback state. Thread-safe: every member may be used from any thread. Notifications are posted, and `events`
/// yield, on a serial queue of the player's own, in the order the changes happened.
public final class MoviePlayerController: Sendable {
    // Every mutable value is in `state`. Under its mutex the player calls its playback (whose methods never block and
    // never report synchronously, see `MoviePlayback`), queues deliveries on `delivery` and reads mutexes that take no
    // other (`CastRoute`'s selection, `view`'s settings); it never calls another player, the registry or an owner
    // (those calls happen after the mutex is released), so locks are never held in a cycle.
    let state: Mutex<State>
    /// Where local playback goes.
    public let outputs: Outputs
    /// Who this player is to receivers.
    public let configuration: CastKitConfiguration
    /// The movie's place in the application's own window (the seeds' `view`): give it an X11 window and local
    /// pictures are drawn there. See `MovieView`.
    public let view = MovieView()
    /// The view behind the movie (the seeds' `backgroundView`): its colour fills what the picture does not cover.
    public let backgroundView = MovieBackgroundView()
    /// Posts notifications and feeds `events`, one change after the other.
    let delivery = DispatchQueue(label: "CastKit.MoviePlayerController.delivery")

    /// Set when an AudioPlayer or a MusicPlayerController uses this player as its engine.
    let role: EngineRole?

    /// A player for the movie at `contentURL` (a file or an http(s) URL); nothing is loaded until `prepareToPlay()` or `play()`.
    public convenience init(
        contentURL: URL?, outputs: Outputs = Outputs(), configuration: CastKitConfiguration = CastKitConfiguration()
    ) {
        self.init(contentURL: contentURL, outputs: outputs, configuration: configuration, role: nil)
    }

    /// A player that is the engine of another CastKit player (`role`), or a movie player (nil).
    init(contentURL: URL?, outputs: Outputs, configuration: CastKitConfiguration, role: EngineRole?) {
        self.outputs = outputs
        self.configuration = configuration
        self.role = role
        state = Mutex(State(contentURL: contentURL))
        MoviePlayerRegistry.shared.add(self)
        view.onChange { [weak self] in self?.viewChanged() }
        backgroundView.onChange { [weak self] in self?.viewChanged() }
    }

    deinit {
        MoviePlayerRegistry.shared.remove(ObjectIdentifier(self))
        let (playback, subscribers) = state.withLock { ($0.playback, $0.subscribers) }
        playback?.perform(.stop)
        for continuation in subscribers.values { continuation.finish() }
    }

    // MARK: The movie

    /// The movie, a file or an http(s) URL. Setting it unloads the current movie (which pauses: no finish is posted) and, when one
    /// was loaded, loads the new one from its start, which plays when `shouldAutoplay` is true.
    public var contentURL: URL? {
        get { state.withLock { $0.contentURL } }
        set {
            let claimed = state.withLock { state -> Bool in
                let wasLoaded = state.playback != nil
                unload(in: &state)
                let changed = state.contentURL != newValue
                state.contentURL = newValue
                if changed {
                    // A detected source type belongs to the movie it was detected from.
                    if !state.sourceTypeGiven { state.movieSourceType = .unknown }
                    announce(.nowPlayingMovieDidChange(newValue), in: state)
                }
                state.thumbnailer?.close()
                state.thumbnailer = nil
                resetMovie(in: &state)
                // A time set before this movie was given belongs to the one before: a new movie starts at its
                // beginning (or `initialPlaybackTime`) unless a time is set after it.
                state.pendingStart = nil
                guard wasLoaded else { return false }
                load(from: state.movieStart, playing: state.shouldAutoplay, in: &state)
                return state.shouldAutoplay
            }
            if claimed { claimPlayback() }
        }
    }

    /// The movie's length in seconds; 0 until known (`.movieDurationAvailable`).
    public var duration: TimeInterval { state.withLock { $0.movie.duration } }

    /// The size of the movie's pictures (display aspect applied); zero until known (`.movieNaturalSizeAvailable`).
    public var naturalSize: CGSize { state.withLock { $0.movie.naturalSize } }

    /// The kinds of media the movie holds; empty until known (`.movieMediaTypesAvailable`).
    public var movieMediaTypes: MediaTypes { state.withLock { $0.movie.mediaTypes } }

    /// How far loading has come; empty until the movie is opened (`.moviePlayerLoadStateDidChange`).
    public var loadState: LoadState { state.withLock { $0.movie.loadState } }

    /// Whether the first picture is ready to be shown (`.moviePlayerReadyForDisplayDidChange`).
    public var readyForDisplay: Bool { state.withLock { $0.movie.readyForDisplay } }

    /// The kinds of media a movie holds (MPMovieMediaTypeMask).
    public struct MediaTypes: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// At least one video stream.
        public static let video = MediaTypes(rawValue: 1 << 0)
        /// At least one audio stream.
        public static let audio = MediaTypes(rawValue: 1 << 1)
    }

    // MARK: Playback

    /// Whether the loaded movie is ready to play: true once it was opened and enough of it is buffered to start
    /// (its load state became `.playable`), until it is stopped, finishes or is replaced; false while it is still
    /// opening (watch `loadState` to hear when it turns true).
    public var isPreparedToPlay: Bool { state.withLock { $0.playback != nil && $0.movie.prepared } }

    /// Whether a movie is loaded (opening, playing or paused): what an audio player's `prepareToPlay()` answers.
    var isLoaded: Bool { state.withLock { $0.playback != nil } }

    /// Whether `prepareToPlay()` starts playback as soon as the movie is loaded. Default true.
    public var shouldAutoplay: Bool {
        get { state.withLock { $0.shouldAutoplay } }
        set { state.withLock { $0.shouldAutoplay = newValue } }
    }

    /// Where playback of a newly loaded movie begins, in seconds; -1 (the default), any negative value and NaN (the
    /// iOS SDK's default) are the movie's start.
    public var initialPlaybackTime: TimeInterval {
        get { state.withLock { $0.initialPlaybackTime } }
        set { state.withLock { $0.initialPlaybackTime = newValue } }
    }

    /// Where playback ends, in seconds; -1 (the default) is the movie's end. Reaching it finishes the movie with
    /// `.playbackEnded`, within a position report (a quarter of a second) of the time.
    public var endPlaybackTime: TimeInterval {
        get { state.withLock { $0.endPlaybackTime } }
        set { state.withLock { $0.endPlaybackTime = newValue } }
    }

    /// Loads the movie (opens and probes it, locally or on the receiver); it plays when `shouldAutoplay` is true and
    /// waits paused otherwise. Does nothing when a movie is loaded.
    public func prepareToPlay() {
        let claimed = state.withLock { state -> Bool in
            guard state.playback == nil else { return false }
            load(from: state.takeStartPosition(), playing: state.shouldAutoplay, in: &state)
            return state.shouldAutoplay && state.playback != nil
        }
        if claimed { claimPlayback() }
    }

    /// Plays: loads the movie first when needed, resumes a paused one; stops whichever other movie player plays.
    public func play() {
        if state.withLock({ state in resumeOrLoad(in: &state) }) { claimPlayback() }
    }

    /// Resumes the loaded movie, or loads it playing; returns whether one is loaded now.
    private func resumeOrLoad(in state: inout State) -> Bool {
        if let playback = state.playback {
            state.intent = .playing
            playback.perform(.resume)
        } else {
            load(from: state.takeStartPosition(), playing: true, in: &state)
        }
        return state.playback != nil
    }

    /// Plays the next item of a queue whose item ended by itself (a music player advancing): as `play()`, except that
    /// a player that started to play meanwhile keeps playing, and this one waits, interrupted by it (as if it had
    /// been playing when that one started). Between two items nothing plays, so `play()` would take over.
    func playNextItem() {
        let loaded = state.withLock { state in resumeOrLoad(in: &state) }
        guard loaded, !MoviePlayerRegistry.shared.claimIfFree(self) else { return }
        yieldPlayback()
    }

    /// Pauses where the movie is.
    public func pause() {
        state.withLock { state in
            guard let playback = state.playback else { return }
            state.intent = .paused
            state.position.rebase(running: false)
            playback.perform(.pause)
            // The access log's entry as it stands now (it is not asked for again while paused).
            playback.perform(.accessLog)
        }
        releasePlayback()
    }

    /// Stops and unloads the movie: `playbackState` becomes `.stopped`, `.moviePlayerPlaybackDidFinish` is posted with
    /// `.userExited`, and the next `play()` starts from the beginning (or `initialPlaybackTime`).
    public func stop() {
        state.withLock { state in
            // A group's members kept for a next file are let go (`CarriedGroup.close` does not block).
            state.carriedGroup?.close()
            state.carriedGroup = nil
            guard state.playback != nil else { return }
            unload(finishing: true, in: &state)
            state.position = PositionEstimate()
            finish(reason: .userExited, error: nil, in: &state)
        }
        releasePlayback()
    }

    /// The playback position in seconds. Setting it seeks there exactly (the picture at that time, audio from it); set
    /// before the movie is loaded, it is where the movie will begin.
    public var currentPlaybackTime: TimeInterval {
        get { state.withLock { $0.currentTime } }
        set {
            guard newValue.isFinite else { return }
            state.withLock { state in
                let target = state.movie.duration > 0 ? min(max(newValue, 0), state.movie.duration) : max(newValue, 0)
                guard let playback = state.playback else {
                    state.pendingStart = target
                    state.position = PositionEstimate(seconds: target)
                    return
                }
                state.position = PositionEstimate(seconds: target)
                playback.perform(.seek(position: target, exact: true))
            }
        }
    }

    /// The rate: 0 while not playing, otherwise the playing speed (1 normal). Setting 0 pauses; setting another value
    /// (clamped to 0.5...2, pitch kept) plays at that rate.
    public var currentPlaybackRate: Float {
        get { state.withLock { state in state.playbackState == .playing ? Float(state.rate) : 0 } }
        set {
            guard !newValue.isNaN else { return }
            if newValue <= 0 { return pause() }
            rateSetting = newValue
            play()
        }
    }

    /// Whether a movie is loaded and asked to play (it may still be opening): what an owner switching items keeps.
    var isPlayingOrAboutTo: Bool { state.withLock { state in state.playback != nil && state.intent == .playing } }

    /// The rate playback runs at while playing (0.5...2), without starting playback as `currentPlaybackRate` does.
    var rateSetting: Float {
        get { state.withLock { Float($0.rate) } }
        set {
            guard !newValue.isNaN else { return }
            state.withLock { state in
                state.position.rebase(running: state.position.running)
                state.rate = min(max(Double(newValue), 0.5), 2)
                state.position.rate = state.rate
                state.playback?.perform(.rate(state.rate))
            }
        }
    }

    /// The output level, 0...1 (default 1); on a receiver it sets the receiver's level. Kept across movies.
    var volume: Double {
        get { state.withLock { $0.volume } }
        set {
            guard newValue.isFinite else { return }
            state.withLock { state in
                state.volume = min(max(newValue, 0), 1)
                state.playback?.perform(.volume(state.volume))
            }
        }
    }

    /// `.playing`, `.paused`, `.stopped`, `.interrupted`, or seeking (`.moviePlayerPlaybackStateDidChange`).
    public var playbackState: PlaybackState { state.withLock { $0.playbackState } }

    // MARK: Routes

    /// Whether the movie may play on the selected receiver (`CastRoute.selected`). Default true. Setting it moves
    /// a loaded movie, at its position and in its playback state.
    public var allowsAirPlay: Bool {
        get { state.withLock { $0.allowsAirPlay } }
        set {
            state.withLock { state in
                guard state.allowsAirPlay != newValue else { return }
                state.allowsAirPlay = newValue
                follow(state.route.selectionChanged(candidate: routeCandidate(in: state)), in: &state)
            }
        }
    }

    /// Whether the movie's video plays on a receiver (`.moviePlayerIsAirPlayVideoActiveDidChange`).
    public var isAirPlayVideoActive: Bool { state.withLock { $0.isAirPlayVideoActive } }

    /// The receiver the movie plays on now (a group's leader: the first member still in it); nil while it plays
    /// locally or is not loaded.
    public var activeRoute: ReceiverDescription? { state.withLock { $0.playback?.route } }

    /// Every receiver the movie plays on now: one, or a group's members (as selected, then as they joined); empty
    /// while it plays locally or is not loaded.
    public var activeReceivers: [ReceiverDescription] { state.withLock { $0.playback?.receivers ?? [] } }

    /// Sets the output level (0...1) of one receiver the movie plays on, alone: a member of a group keeps its own
    /// level, as each AirPlay 2 speaker has its slider (the player's level, `MusicPlayerController.volume`, sets
    /// every member's). On the one receiver the movie plays on, it is the player's level. Ignored for a receiver the
    /// movie does not play on.
    public func setVolume(_ volume: Float, forReceiver receiver: ReceiverDescription) {
        guard volume.isFinite else { return }
        let level = min(max(Double(volume), 0), 1)
        state.withLock { state in
            guard let playback = state.playback, playback.receivers.contains(receiver) else { return }
            if playback.keepsLevelPerReceiver {
                playback.setVolume(level, of: receiver)
            } else {
                state.volume = level
                playback.perform(.volume(level))
            }
        }
    }

    /// The level (0...1) a receiver of the group the movie plays on last reported; on the one receiver the movie plays
    /// on, the player's level; nil for a receiver it does not play on (or a member that has reported none yet).
    public func volume(forReceiver receiver: ReceiverDescription) -> Float? {
        state.withLock { state in
            guard let playback = state.playback, playback.receivers.contains(receiver) else { return nil }
            if playback.keepsLevelPerReceiver { return playback.volume(of: receiver).map(Float.init) }
            return Float(state.volume)
        }
    }

    /// Called by `CastRoute` after the selection changed.
    func routeDidChange() {
        state.withLock { state in
            follow(state.route.selectionChanged(candidate: routeCandidate(in: state)), in: &state)
        }
    }

    // MARK: Events

    /// A new stream of this player's events from now on, the same as its notifications; it ends when the player is
    /// released. Each call makes a new subscriber (a method, not a property, for that reason).
    public func events() -> AsyncStream<MoviePlayerEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: MoviePlayerEvent.self)
        let id = UUID()
        state.withLock { $0.subscribers[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            _ = state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// The key of a finish notification's `FinishReason`.
    public static let finishReasonUserInfoKey = "MoviePlayerPlaybackDidFinishReasonUserInfoKey"
    /// The key of a finish notification's `CastError`, present for `.playbackError`.
    public static let errorUserInfoKey = "error"

    /// Makes this the one player that plays; the one that played stops, or is interrupted when it is the engine of
    /// an audio or music player. Called without the mutex.
    private func claimPlayback() {
        MoviePlayerRegistry.shared.claim(self)?.yieldPlayback()
    }

    /// This player no longer plays (paused, stopped, finished): players it interrupted hear that the interruption
    /// ended. Called without the mutex.
    func releasePlayback() {
        for player in MoviePlayerRegistry.shared.release(self) {
            player.interruptionEnded()
        }
    }

    /// Another player started to play (or plays, when this one was about to).
    private func yieldPlayback() {
        guard role?.yields == .interrupt else { return stop() }
        let interrupted = state.withLock { state -> Bool in
            guard let playback = state.playback, state.intent == .playing else { return false }
            state.intent = .paused
            state.position.rebase(running: false)
            playback.perform(.pause)
            state.interrupted = true
            setPlaybackState(.interrupted, in: &state)
            signal(.interruptionBegan)
            return true
        }
        if interrupted { MoviePlayerRegistry.shared.noteInterrupted(self) }
    }

    /// The player that interrupted this one stopped playing: it stays paused, and its owner hears it may resume.
    private func interruptionEnded() {
        state.withLock { state in
            guard state.interrupted else { return }
            state.interrupted = false
            if state.playbackState == .interrupted { setPlaybackState(.paused, in: &state) }
            signal(.interruptionEnded)
        }
    }
}

/// How an AudioPlayer or a MusicPlayerController uses a movie player as its engine.
struct EngineRole: Sendable {
    /// What another player starting to play does to this one.
    enum Yield: Sendable {
        /// It stops, with a finish (`userExited`): movie players.
        case stop
        /// It pauses in state `.interrupted`, and the owner hears when the other player stops playing.
        case interrupt
    }

    /// Called on the player's delivery queue, in order, with everything the owner needs to hear.
    var observe: @Sendable (EngineSignal) -> Void
    /// Whether the movie player's own notifications are posted (false: the owner posts its own).
    var postsNotifications: Bool
    var yields: Yield
    /// Asked when the movie ended by itself, before the finish is announced: true when the owner plays on at once (an
    /// audio player's next loop; the answer is its decision), so the players it interrupted are not told the
    /// interruption ended in the gap. Called without the player's mutex.
    var playsOnAfterEnd: @Sendable () -> Bool = { false }
}

/// What an engine player tells its owner.
enum EngineSignal: Sendable {
    /// A change, as movie players announce it.
    case event(MoviePlayerEvent)
    /// Playback was interrupted (another CastKit player took the audio, or the receiver was lost); it is paused.
    case interruptionBegan
    /// The interruption is over; playback may resume (it does not by itself).
    case interruptionEnded
}
