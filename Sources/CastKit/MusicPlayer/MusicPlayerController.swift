public import CastProtocol
public import Foundation

/// Plays a queue of music, locally or on the selected receiver, with the semantics of the seeds' music player
/// (MPMusicPlayerController): a queue set from items or a query, `nowPlayingItem`, shuffle and repeat modes,
/// skipping, and notifications between `beginGeneratingPlaybackNotifications()` and
/// `endGeneratingPlaybackNotifications()`.
///
/// One item plays at a time through the same engine as `MoviePlayerController` (audio only), which moves to a
/// receiver, or a group of them, the same way (`CastRoute.selection`, `allowsAirPlay`). Another CastKit player starting
/// to play interrupts it (`playbackState` `.interrupted`, then `.paused`); it does not resume by itself.
///
/// Thread-safety: every member may be used from any thread; the queue lives behind `lock`, the playback in the engine
/// player (behind its own lock, never taken while `lock` is held). Notifications are posted on the engine's serial
/// delivery queue, in order.
public final class MusicPlayerController: @unchecked Sendable {
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

    // Invariant: `queue`, `order`, `index`, `shuffle`, `repeatMode` and `notifying` are read and written only under
    // `lock`; the engine is called without it.
    private let lock = NSLock()
    private var queue: [MediaItem] = []
    /// Indices into `queue` in playing order.
    private var order: [Int] = []
    /// The position in `order` of the now playing item; nil when there is none.
    private var index: Int?
    private var shuffle = ShuffleMode.off
    private var repeats = RepeatMode.none
    private var notifying = 0
    private var engine: MoviePlayerController!
    /// A switch of the now playing item that waits a moment before it reaches the engine (see `setQueue(with:)`).
    private var pending: PendingSwitch?
    private var pendingGeneration = 0

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
        let role = EngineRole(
            observe: { [weak self] signal in self?.engineSignalled(signal) }, postsNotifications: false,
            yields: .interrupt)
        engine = MoviePlayerController(contentURL: nil, outputs: audioOnly, configuration: configuration, role: role)
        engine.shouldAutoplay = false
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
        let (first, deferred) = lock.withLock { () -> (MediaItem?, Bool) in
            queue = items
            order = Self.order(count: items.count, shuffle: shuffle, first: nil)
            index = order.isEmpty ? nil : 0
            let first = index.map { queue[order[$0]] }
            guard wasPlaying, let first, let loaded, items.contains(where: { $0.url.standardizedFileURL == loaded })
            else { return (first, false) }
            pendingGeneration += 1
            pending = PendingSwitch(item: first, time: nil, generation: pendingGeneration)
            let generation = pendingGeneration
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
        let first = lock.withLock { () -> MediaItem?? in
            let start = queue.count
            queue += items
            let added = Array(start..<queue.count)
            if shuffle == .songs {
                let played = (index ?? -1) + 1
                var rest = Array(order[played...]) + added
                rest.shuffle()
                order = Array(order[..<played]) + rest
            } else {
                order += added
            }
            guard index == nil, !order.isEmpty else { return .none }
            index = 0
            return .some(queue[order[0]])
        }
        if case .some(let item) = first { load(item, playing: false) }
    }

    /// The queue, in the order it was set.
    public var items: [MediaItem] { lock.withLock { queue } }

    /// The item playing (or paused, or next to play); nil when the queue is empty or was played through. Setting
    /// an item of the queue starts it from its beginning (playing if the player was playing); an item not in the
    /// queue is ignored.
    public var nowPlayingItem: MediaItem? {
        get { lock.withLock { index.map { queue[order[$0]] } } }
        set {
            guard let newValue else { return stop() }
            let wasPlaying = engine.isPlayingOrAboutTo
            let found = lock.withLock { () -> Bool in
                guard let queueIndex = queue.firstIndex(of: newValue), let position = order.firstIndex(of: queueIndex)
                else { return false }
                index = position
                // A switch that waits takes the new item instead, from its beginning.
                if pending != nil {
                    pending?.item = newValue
                    pending?.time = nil
                }
                return true
            }
            if found && !lock.withLock({ pending != nil }) { load(newValue, playing: wasPlaying) }
        }
    }

    /// The index of the now playing item in the queue (as set, not shuffled); nil when there is none.
    public var indexOfNowPlayingItem: Int? { lock.withLock { index.map { order[$0] } } }

    /// The order items play in. Turning shuffle on keeps the now playing item and shuffles the rest; turning it off
    /// goes back to the queue's order from the now playing item.
    public var shuffleMode: ShuffleMode {
        get { lock.withLock { shuffle } }
        set {
            lock.withLock {
                guard shuffle != newValue else { return }
                shuffle = newValue
                let current = index.map { order[$0] }
                order = Self.order(count: queue.count, shuffle: newValue, first: current)
                index = current.flatMap { order.firstIndex(of: $0) }
            }
        }
    }

    /// What happens at the end of an item and of the queue. Default `.none`.
    public var repeatMode: RepeatMode {
        get { lock.withLock { repeats } }
        set { lock.withLock { repeats = newValue } }
    }

    // MARK: Playback

    /// Plays the now playing item (from where it was paused).
    public func play() {
        applyPendingSwitch()
        if lock.withLock({ index == nil && !order.isEmpty }) {
            // Played through: start the queue over.
            let first = lock.withLock { () -> MediaItem in
                index = 0
                return queue[order[0]]
            }
            engine.contentURL = first.url
        }
        engine.play()
    }

    /// Pauses.
    public func pause() {
        applyPendingSwitch()
        engine.pause()
    }

    /// Stops; the now playing item stays, and plays from its beginning on `play()`.
    public func stop() {
        applyPendingSwitch()
        engine.stop()
    }

    /// Opens the now playing item so that `play()` starts at once.
    public func prepareToPlay() {
        applyPendingSwitch()
        engine.prepareToPlay()
    }

    /// `.playing`, `.paused`, `.stopped` or `.interrupted`; `.seekingForward` or `.seekingBackward` while scrubbing.
    public var playbackState: PlaybackState { engine.playbackState }

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
        get { lock.withLock { pending.map { $0.time ?? 0 } } ?? engine.currentPlaybackTime }
        set {
            let waiting = lock.withLock { () -> Bool in
                guard pending != nil else { return false }
                pending?.time = newValue
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
        guard let next = lock.withLock({ advance(afterEnd: false) }) else { return endOfQueue() }
        load(next, playing: wasPlaying)
    }

    /// Moves to the previous item in playing order. Before the first: the last with `.all`, otherwise the first
    /// item again from its beginning.
    public func skipToPreviousItem() {
        applyPendingSwitch()
        let wasPlaying = engine.isPlayingOrAboutTo
        let previous = lock.withLock { () -> MediaItem? in
            guard let current = index, !order.isEmpty else { return nil }
            if current > 0 {
                index = current - 1
            } else if repeats == .all {
                index = order.count - 1
            } else {
                index = 0
            }
            return queue[order[index!]]
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
        lock.withLock { notifying += 1 }
    }

    /// Stops posting, once as many ends as begins were called.
    public func endGeneratingPlaybackNotifications() {
        lock.withLock { notifying = max(0, notifying - 1) }
    }

    // MARK: Internals

    /// Brings the engine to where the program asked while a switch waited (`generation`: only that switch, from its
    /// timer; nil: whichever waits, before another call acts). The item playing now, asked for again at about the
    /// time it is at (within `restoreTolerance`, the time the program took), plays on untouched.
    private func applyPendingSwitch(generation: Int? = nil) {
        let taken = lock.withLock { () -> PendingSwitch? in
            guard let waiting = pending, generation == nil || waiting.generation == generation else { return nil }
            pending = nil
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

    /// Loads `item` into the engine at its beginning, playing or waiting.
    private func load(_ item: MediaItem?, playing: Bool) {
        guard let item else { return }
        let changed =
            engine.contentURL?.standardizedFileURL != item.url.standardizedFileURL
            || engine.currentPlaybackTime > 0.01
        engine.stop()
        engine.contentURL = item.url
        if playing { engine.play() }
        if changed { post(.musicPlayerControllerNowPlayingItemDidChange) }
    }

    /// The queue was played through: stopped, nothing playing.
    private func endOfQueue() {
        engine.stop()
        engine.contentURL = nil
        post(.musicPlayerControllerNowPlayingItemDidChange)
    }

    /// The item after the now playing one, made the now playing one: the same again when it ended by itself under
    /// `.one`; past the last, the first under `.all` (a new round), else nil (the queue was played through).
    /// Under `lock`.
    private func advance(afterEnd: Bool) -> MediaItem? {
        guard let current = index else { return nil }
        if afterEnd && repeats == .one { return queue[order[current]] }
        if current + 1 < order.count {
            index = current + 1
        } else if repeats == .all && !order.isEmpty {
            reshuffleForNewRound()
            index = 0
        } else {
            index = nil
            return nil
        }
        return queue[order[index!]]
    }

    /// A new round of `.all` while shuffling plays a new order, every item once. Under `lock`.
    private func reshuffleForNewRound() {
        guard shuffle == .songs else { return }
        order = Self.order(count: queue.count, shuffle: .songs, first: nil)
    }

    /// Indices in playing order: the queue's, or a shuffle that starts with `first` when given.
    private static func order(count: Int, shuffle: ShuffleMode, first: Int?) -> [Int] {
        guard shuffle == .songs else { return Array(0..<count) }
        var rest = Array(0..<count).filter { $0 != first }
        rest.shuffle()
        return (first.map { [$0] } ?? []) + rest
    }

    private func post(_ name: Notification.Name) {
        guard lock.withLock({ notifying > 0 }) else { return }
        NotificationCenter.default.post(name: name, object: self)
    }

    /// The engine's reports, on its delivery queue.
    private func engineSignalled(_ signal: EngineSignal) {
        switch signal {
        case .event(.playbackStateDidChange):
            post(.musicPlayerControllerPlaybackStateDidChange)
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
    /// one was between items keeps playing, and this one waits for it, interrupted.
    private func advanceAfterEnd() {
        // The item that ended was on its way out: the switch that waited plays now.
        if lock.withLock({ pending != nil }) {
            applyPendingSwitch()
            if !engine.isPlayingOrAboutTo { engine.play() }
            return
        }
        guard let next = lock.withLock({ advance(afterEnd: true) }) else { return endOfQueue() }
        engine.contentURL = next.url
        engine.playNextItem()
        post(.musicPlayerControllerNowPlayingItemDidChange)
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
