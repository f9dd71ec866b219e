public import CastProtocol
public import Foundation
import Synchronization

/// Plays a queue of music, locally or on the selected receiver, with the semantics of the seeds' music player
/// (MPMusicPlayerController): a queue set from items or a query, `nowPlayingItem`, shuffle and repeat modes,
/// skipping, and notifications between `beginGeneratingPlaybackNotifications()` and
/// `endGeneratingPlaybackNotifications()`.
///
/// One item plays at a time through the same engine as `MoviePlayerController` (audio only), which moves to a
/// receiver, or a group of them, the same way (`CastRoute.selection`, `allowsAirPlay`). Another CastKit player starting
/// to play interrupts it (`playbackState` `.interrupted`, then `.paused`); it does not resume by itself.
///
/// `playbackState` is the queue's, not the item's: between two items it stays `.playing` (the engine stops a moment
/// there, which does not show), and `.stopped` comes once, when the queue was played through or on `stop()`.
///
/// Thread-safety: every member may be used from any thread; the queue lives in `state`, a `Mutex` under which nothing
/// else is called, the playback in the engine player (called after the mutex is released). Every notification is
/// posted on the engine's serial delivery queue (`MoviePlayerController.deliver`), after what the engine reported
/// before it, so the now playing item's and the state's notifications come in the order the changes happened.
public final class MusicPlayerController: Sendable {
    /// The order items play in (MPMusicShuffleMode).
    public enum ShuffleMode: Sendable {
        /// The queue's order.
        case off
        /// A random order in which every item plays once before any plays again.
        case songs
    }

    /// What happens at the end of an item and of the queue (MPMusicRepeatMode).
    public enum RepeatMode: Sendable {
        /// Play through the queue once, then stop.
        case none
        /// Play the current item again and again.
        case one
        /// Start the queue over after its last item.
        case all
    }

    /// The music player of this program (MPMusicPlayerController.applicationMusicPlayer), on the default outputs.
    public static let applicationMusicPlayer = MusicPlayerController()

    private let engine: MoviePlayerController
    private let state = Mutex(State())

    /// The queue, where it is, and the notifications asked for.
    private struct State {
        var queue: [MediaItem] = []
        /// Indices into `queue` in playing order.
        var order: [Int] = []
        /// The position in `order` of the now playing item; nil when there is none.
        var index: Int?
        var shuffle = ShuffleMode.off
        var repeats = RepeatMode.none
        var notifying = 0
        /// What the program asked for: the state shown while the engine is stopped (between items, or unloaded by a
        /// skip while paused).
        var intent = Intent.stopped
        /// The state the last `.musicPlayerControllerPlaybackStateDidChange` announced (kept on the delivery queue).
        var postedState = PlaybackState.stopped
        /// A switch of the now playing item that waits a moment before it reaches the engine (see `setQueue(with:)`).
        var pending: PendingSwitch?
        var pendingGeneration = 0

        /// The now playing item.
        var nowPlaying: MediaItem? { index.map { queue[order[$0]] } }

        /// The item after the now playing one, made the now playing one: the same again when it ended by itself
        /// under `.one`; past the last, the first under `.all` (a new round), else nil (the queue was played through).
        mutating func advance(afterEnd: Bool) -> MediaItem? {
            guard let current = index else { return nil }
            if afterEnd && repeats == .one { return queue[order[current]] }
            if current + 1 < order.count {
                index = current + 1
            } else if repeats == .all && !order.isEmpty {
                // A new round while shuffling plays a new order, every item once.
                if shuffle == .songs {
                    order = MusicPlayerController.order(count: queue.count, shuffle: .songs, first: nil)
                }
                index = 0
            } else {
                index = nil
                return nil
            }
            return nowPlaying
        }
    }

    /// Playing, paused or stopped, as the program last asked (or the queue's end stopped it).
    private enum Intent {
        case playing, paused, stopped
    }

    /// Where the program has asked the player to be, while a switch waits: the item and the time set since.
    private struct PendingSwitch {
        var item: MediaItem
        var time: TimeInterval?
        var generation: Int
    }

    /// How long a queue change that would interrupt the playing item waits for the program's next settings.
    static let switchGrace: DispatchTimeInterval = .milliseconds(150)

    /// A music player on `outputs` (video is ignored).
    public init(
        outputs: MoviePlayerController.Outputs = MoviePlayerController.Outputs(),
        configuration: CastKitConfiguration = CastKitConfiguration()
    ) {
        var audioOnly = outputs
        audioOnly.video = .none
        let link = EngineOwner<MusicPlayerController>()
        let role = EngineRole(
            observe: { signal in link.owner?.engineSignalled(signal) }, postsNotifications: false, yields: .interrupt)
        engine = MoviePlayerController(contentURL: nil, outputs: audioOnly, configuration: configuration, role: role)
        engine.shouldAutoplay = false
        link.connect(self)
    }

    // MARK: The queue

    /// Makes `items` the queue; the first (in shuffle order, when shuffling) becomes the now playing item. A player
    /// that was playing plays it; one that was paused or stopped waits.
    ///
    /// The seeds' listing 2-5 (save `nowPlayingItem` and `currentPlaybackTime`, set a longer queue, set both back)
    /// must not be heard: when the item playing now is in the new queue, the switch to the first item waits a moment
    /// (`switchGrace`, or until any other call) for the program's next settings, and what reaches the engine is only
    /// where the program ended up. Setting back the item and the time it played at leaves it playing untouched.
    public func setQueue(with items: [MediaItem]) {
        applyPendingSwitch()
        let wasPlaying = engine.isPlayingOrAboutTo
        let loaded = engine.contentURL?.standardizedFileURL
        let (first, deferred) = state.withLock { state -> (MediaItem?, Bool) in
            state.queue = items
            state.order = Self.order(count: items.count, shuffle: state.shuffle, first: nil)
            state.index = state.order.isEmpty ? nil : 0
            let first = state.nowPlaying
            guard wasPlaying, let first, let loaded, items.contains(where: { $0.url.standardizedFileURL == loaded })
            else { return (first, false) }
            state.pendingGeneration += 1
            state.pending = PendingSwitch(item: first, time: nil, generation: state.pendingGeneration)
            let generation = state.pendingGeneration
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.switchGrace) { [weak self] in
                self?.applyPendingSwitch(generation: generation)
            }
            return (first, true)
        }
        if !deferred { load(first, playing: wasPlaying) }
    }

    /// Makes the items a query finds the queue (see `setQueue(with:)`).
    public func setQueue(with query: MediaQuery) {
        setQueue(with: query.items)
    }

    /// Adds items at the end of the queue, keeping what plays and where it is. While shuffling they join the part of
    /// the order not played yet, at random places.
    public func append(_ items: [MediaItem]) {
        applyPendingSwitch()
        let first = state.withLock { state -> MediaItem?? in
            let start = state.queue.count
            state.queue += items
            let added = Array(start..<state.queue.count)
            if state.shuffle == .songs {
                let played = (state.index ?? -1) + 1
                var rest = Array(state.order[played...]) + added
                rest.shuffle()
                state.order = Array(state.order[..<played]) + rest
            } else {
                state.order += added
            }
            guard state.index == nil, !state.order.isEmpty else { return .none }
            state.index = 0
            return .some(state.queue[state.order[0]])
        }
        if case .some(let item) = first { load(item, playing: false) }
    }

    /// The queue, in the order it was set.
    public var items: [MediaItem] { state.withLock { $0.queue } }

    /// The item playing (or paused, or next to play); nil when the queue is empty or was played through. Setting
    /// an item of the queue starts it from its beginning (playing if the player was playing); an item not in the
    /// queue is ignored.
    public var nowPlayingItem: MediaItem? {
        get { state.withLock { $0.nowPlaying } }
        set {
            guard let newValue else { return stop() }
            let wasPlaying = engine.isPlayingOrAboutTo
            let found = state.withLock { state -> Bool in
                guard let queueIndex = state.queue.firstIndex(of: newValue),
                    let position = state.order.firstIndex(of: queueIndex)
                else { return false }
                state.index = position
                // A switch that waits takes the new item instead, from its beginning.
                if state.pending != nil {
                    state.pending?.item = newValue
                    state.pending?.time = nil
                }
                return true
            }
            if found && !state.withLock({ $0.pending != nil }) { load(newValue, playing: wasPlaying) }
        }
    }

    /// The index of the now playing item in the queue (as set, not shuffled); nil when there is none.
    public var indexOfNowPlayingItem: Int? { state.withLock { state in state.index.map { state.order[$0] } } }

    /// The order items play in. Turning shuffle on keeps the now playing item and shuffles the rest; turning it off
    /// goes back to the queue's order from the now playing item.
    public var shuffleMode: ShuffleMode {
        get { state.withLock { $0.shuffle } }
        set {
            state.withLock { state in
                guard state.shuffle != newValue else { return }
                state.shuffle = newValue
                let current = state.index.map { state.order[$0] }
                state.order = Self.order(count: state.queue.count, shuffle: newValue, first: current)
                state.index = current.flatMap { state.order.firstIndex(of: $0) }
            }
        }
    }

    /// What happens at the end of an item and of the queue. Default `.none`.
    public var repeatMode: RepeatMode {
        get { state.withLock { $0.repeats } }
        set { state.withLock { $0.repeats = newValue } }
    }

    // MARK: Playback

    /// Plays the now playing item (from where it was paused).
    public func play() {
        applyPendingSwitch()
        let restart = state.withLock { state -> MediaItem? in
            // Played through: start the queue over.
            guard state.index == nil, !state.order.isEmpty else { return nil }
            state.index = 0
            return state.nowPlaying
        }
        state.withLock { state in
            if state.index != nil { state.intent = .playing }
        }
        if let restart { engine.contentURL = restart.url }
        engine.play()
        announceStateChange()
    }

    /// Pauses.
    public func pause() {
        applyPendingSwitch()
        state.withLock { state in
            if state.intent == .playing { state.intent = .paused }
        }
        engine.pause()
        announceStateChange()
    }

    /// Stops; the now playing item stays, and plays from its beginning on `play()`.
    public func stop() {
        applyPendingSwitch()
        state.withLock { $0.intent = .stopped }
        engine.stop()
        announceStateChange()
    }

    /// Opens the now playing item so that `play()` starts at once.
    public func prepareToPlay() {
        applyPendingSwitch()
        engine.prepareToPlay()
    }

    /// `.playing`, `.paused`, `.stopped` or `.interrupted`; `.seekingForward` or `.seekingBackward` while scrubbing.
    /// The queue's state: `.playing` from one item to the next, `.stopped` once the queue was played through (or on
    /// `stop()`).
    public var playbackState: PlaybackState {
        let engineState = engine.playbackState
        guard engineState == .stopped else { return engineState }
        // The engine stops between two items, and unloads an item skipped to while paused: that is not the queue's
        // state, which is what the program asked for.
        return state.withLock { state in
            guard state.index != nil else { return .stopped }
            switch state.intent {
            case .playing: return .playing
            case .paused: return .paused
            case .stopped: return .stopped
            }
        }
    }

    // MARK: Scrubbing (MPMediaPlayback)

    /// Scrubs forward through the now playing item: `playbackState` becomes `.seekingForward` and the position moves
    /// 2 s ahead every quarter second, silently, until `endSeeking()`; on a receiver or speaker too.
    public func beginSeekingForward() { engine.beginSeekingForward() }

    /// Scrubs backward, as `beginSeekingForward()` does forward.
    public func beginSeekingBackward() { engine.beginSeekingBackward() }

    /// Ends a scrub where it got to; the item plays again if it was playing.
    public func endSeeking() { engine.endSeeking() }

    /// The position within the now playing item, in seconds; setting it seeks there.
    /// While a switch waits (see `setQueue(with:)`), it is the time the program set, or 0.
    public var currentPlaybackTime: TimeInterval {
        get { state.withLock { $0.pending.map { $0.time ?? 0 } } ?? engine.currentPlaybackTime }
        set {
            let waiting = state.withLock { state -> Bool in
                guard state.pending != nil else { return false }
                state.pending?.time = newValue
                return true
            }
            if !waiting { engine.currentPlaybackTime = newValue }
        }
    }

    /// The output level, 0...1 (default 1): on a group, every member's; posts `.musicPlayerControllerVolumeDidChange`.
    public var volume: Float {
        get { Float(engine.volume) }
        set {
            let old = engine.volume
            engine.volume = Double(newValue)
            if engine.volume != old { post(.musicPlayerControllerVolumeDidChange) }
        }
    }

    /// Whether it may play on the selected receiver (`CastRoute.selected`). Default true.
    public var allowsAirPlay: Bool {
        get { engine.allowsAirPlay }
        set { engine.allowsAirPlay = newValue }
    }

    /// The receiver it plays on now (a group's leader); nil while local or not loaded.
    public var activeRoute: ReceiverDescription? { engine.activeRoute }

    /// Every receiver it plays on now: one, or a group's members (`CastRoute.selection` of several); empty while local
    /// or not loaded.
    public var activeReceivers: [ReceiverDescription] { engine.activeReceivers }

    /// Sets the level (0...1) of one receiver of the group it plays on, alone, as each AirPlay 2 speaker has its own
    /// slider; `volume` sets every member's. Ignored for a receiver it does not play on.
    public func setVolume(_ volume: Float, forReceiver receiver: ReceiverDescription) {
        engine.setVolume(volume, forReceiver: receiver)
    }

    /// The level (0...1) `receiver` last reported while it plays in the group; nil for a receiver it does not play on.
    public func volume(forReceiver receiver: ReceiverDescription) -> Float? {
        engine.volume(forReceiver: receiver)
    }

    /// Moves to the next item in playing order. After the last: the first with `.all`, otherwise playback stops and
    /// there is no now playing item.
    public func skipToNextItem() {
        applyPendingSwitch()
        let wasPlaying = engine.isPlayingOrAboutTo
        guard let next = state.withLock({ $0.advance(afterEnd: false) }) else { return endOfQueue() }
        load(next, playing: wasPlaying)
    }

    /// Moves to the previous item in playing order. Before the first: the last with `.all`, otherwise the first
    /// item again from its beginning.
    public func skipToPreviousItem() {
        applyPendingSwitch()
        let wasPlaying = engine.isPlayingOrAboutTo
        let previous = state.withLock { state -> MediaItem? in
            guard let current = state.index, !state.order.isEmpty else { return nil }
            if current > 0 {
                state.index = current - 1
            } else if state.repeats == .all {
                state.index = state.order.count - 1
            } else {
                state.index = 0
            }
            return state.nowPlaying
        }
        guard let previous else { return }
        load(previous, playing: wasPlaying)
    }

    /// Goes back to the beginning of the now playing item.
    public func skipToBeginning() {
        applyPendingSwitch()
        engine.currentPlaybackTime = 0
    }

    // MARK: Notifications

    /// Starts posting `.musicPlayerControllerPlaybackStateDidChange`, `...NowPlayingItemDidChange` and
    /// `...VolumeDidChange`. Calls nest: each needs its `endGeneratingPlaybackNotifications()`.
    public func beginGeneratingPlaybackNotifications() {
        state.withLock { $0.notifying += 1 }
    }

    /// Stops posting, once as many ends as begins were called.
    public func endGeneratingPlaybackNotifications() {
        state.withLock { $0.notifying = max(0, $0.notifying - 1) }
    }

    // MARK: Internals

    /// Brings the engine to where the program asked while a switch waited (`generation`: only that switch, from its
    /// timer; nil: whichever waits, before another call acts). The item playing now, asked for again at about the
    /// time it is at (within `restoreTolerance`, the time the program took), plays on untouched.
    private func applyPendingSwitch(generation: Int? = nil) {
        let taken = state.withLock { state -> PendingSwitch? in
            guard let waiting = state.pending, generation == nil || waiting.generation == generation else { return nil }
            state.pending = nil
            return waiting
        }
        guard let taken else { return }
        let loaded = engine.contentURL?.standardizedFileURL
        if loaded == taken.item.url.standardizedFileURL {
            let target = taken.time ?? 0
            if abs(engine.currentPlaybackTime - target) > Self.restoreTolerance { engine.currentPlaybackTime = target }
            return
        }
        load(taken.item, playing: engine.isPlayingOrAboutTo)
        if let time = taken.time, time > 0 { engine.currentPlaybackTime = time }
    }

    /// How far the position set back may be from where the item is, and still count as "where it is".
    static let restoreTolerance: TimeInterval = 0.5

    /// Loads `item` into the engine at its beginning, playing or waiting (paused, or stopped when it was).
    private func load(_ item: MediaItem?, playing: Bool) {
        guard let item else { return }
        let changed =
            engine.contentURL?.standardizedFileURL != item.url.standardizedFileURL
            || engine.currentPlaybackTime > 0.01
        state.withLock { state in
            if playing {
                state.intent = .playing
            } else if state.intent == .playing {
                state.intent = .paused
            }
        }
        engine.stop()
        engine.contentURL = item.url
        if playing { engine.play() }
        if changed { post(.musicPlayerControllerNowPlayingItemDidChange) }
        announceStateChange()
    }

    /// The queue was played through: stopped, nothing playing.
    private func endOfQueue() {
        state.withLock { $0.intent = .stopped }
        engine.stop()
        engine.contentURL = nil
        post(.musicPlayerControllerNowPlayingItemDidChange)
        announceStateChange()
    }

    /// Indices in playing order: the queue's, or a shuffle that starts with `first` when given.
    private static func order(count: Int, shuffle: ShuffleMode, first: Int?) -> [Int] {
        guard shuffle == .songs else { return Array(0..<count) }
        var rest = Array(0..<count).filter { $0 != first }
        rest.shuffle()
        return (first.map { [$0] } ?? []) + rest
    }

    /// Posts `name` on the delivery queue, after what the engine reported so far, when notifications are generated now.
    private func post(_ name: Notification.Name) {
        guard state.withLock({ $0.notifying > 0 }) else { return }
        engine.deliver { [weak self] in
            guard let self else { return }
            NotificationCenter.default.post(name: name, object: self)
        }
    }

    /// Announces the state if it changed, on the delivery queue after what the engine reported so far.
    private func announceStateChange() {
        engine.deliver { [weak self] in self?.postStateIfChanged() }
    }

    /// Posts `.musicPlayerControllerPlaybackStateDidChange` when the state shown differs from the last one
    /// announced. On the delivery queue only.
    private func postStateIfChanged() {
        let now = playbackState
        let posts = state.withLock { state -> Bool in
            guard state.postedState != now else { return false }
            state.postedState = now
            return state.notifying > 0
        }
        if posts { NotificationCenter.default.post(name: .musicPlayerControllerPlaybackStateDidChange, object: self) }
    }

    /// The engine's reports, on its delivery queue.
    private func engineSignalled(_ signal: EngineSignal) {
        switch signal {
        case .event(.playbackStateDidChange):
            // The engine's `.stopped` between two items shows as `.playing` (see `playbackState`): no change.
            postStateIfChanged()
        case .event(.playbackDidFinish(.playbackEnded, _)):
            advanceAfterEnd()
        case .event(.playbackDidFinish(.playbackError, _)):
            // An item that cannot be played is skipped, as a music player does.
            advanceAfterEnd()
        default:
            break
        }
    }

    /// The now playing item ended by itself: the next per the repeat mode. A player that started to play while this
    /// one was between items keeps playing, and this one waits for it, interrupted. On the delivery queue.
    private func advanceAfterEnd() {
        // The item that ended was on its way out: the switch that waited plays now.
        if state.withLock({ $0.pending != nil }) {
            applyPendingSwitch()
            if !engine.isPlayingOrAboutTo { engine.play() }
            return
        }
        guard let next = state.withLock({ $0.advance(afterEnd: true) }) else { return endOfQueue() }
        // Posted here, on the delivery queue, before the next item starts: the change is heard in order, and an
        // observer that starts another player then (between the items) keeps it playing.
        if state.withLock({ $0.notifying > 0 }) {
            NotificationCenter.default.post(name: .musicPlayerControllerNowPlayingItemDidChange, object: self)
        }
        engine.contentURL = next.url
        engine.playNextItem()
    }
}

extension Notification.Name {
    /// A music player's `playbackState` changed. Object: the player.
    public static let musicPlayerControllerPlaybackStateDidChange = Notification.Name(
        "MusicPlayerControllerPlaybackStateDidChange")
    /// A music player's `nowPlayingItem` changed. Object: the player.
    public static let musicPlayerControllerNowPlayingItemDidChange = Notification.Name(
        "MusicPlayerControllerNowPlayingItemDidChange")
    /// A music player's `volume` changed. Object: the player.
    public static let musicPlayerControllerVolumeDidChange = Notification.Name("MusicPlayerControllerVolumeDidChange")
}
