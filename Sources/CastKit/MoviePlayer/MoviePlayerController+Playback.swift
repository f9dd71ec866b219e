import CastProtocol
import Foundation

/// Where the route rules' clock counts from.
private let routeClockOrigin = ContinuousClock.now

// Everything here runs under the player's lock.
extension MoviePlayerController {
    /// The position now, within the movie.
    func currentTime() -> Double {
        let seconds = max(state.position.now, 0)
        return state.movie.duration > 0 ? min(seconds, state.movie.duration) : seconds
    }

    /// Where the next load begins: a position set while unloaded, else `initialPlaybackTime`, else 0.
    func startPosition() -> Double {
        defer { state.pendingStart = nil }
        return state.pendingStart ?? state.movieStart
    }

    /// The receivers this player may play on: the selection while `allowsAirPlay`, those that play this player's
    /// media; nil when none.
    var routeCandidate: [ReceiverDescription]? {
        guard state.allowsAirPlay else { return nil }
        var selection = CastRoute.selection
        // An AirPlay speaker plays sound only: audio and music players go there, movies stay here.
        if role == nil { selection.removeAll { $0.kind == .speaker } }
        // A group plays a file, served to every member; a stream plays on the first receiver alone.
        if selection.count > 1, let url = state.contentURL, !url.isFileURL { selection = [selection[0]] }
        return selection.isEmpty ? nil : selection
    }

    /// Whether the movie should play on receivers, and which (the route rules: not the route that failed).
    var wantedRoute: [ReceiverDescription]? { state.route.wanted(candidate: routeCandidate) }

    /// Loads the movie at `seconds` where it should play now, playing or paused.
    func load(from seconds: Double, playing: Bool) {
        guard let url = state.contentURL else { return }
        let scheme = url.scheme?.lowercased()
        guard url.isFileURL || scheme == "http" || scheme == "https" else {
            let message = "\(url) is neither a file nor an http(s) URL"
            finish(reason: .playbackError, error: CastError(.usage, message))
            return
        }
        if !state.sourceTypeGiven && state.movieSourceType == .unknown {
            state.movieSourceType = url.isFileURL ? .file : .streaming
            announce(.sourceTypeAvailable(state.movieSourceType))
        }
        state.intent = playing ? .playing : .paused
        state.position = PositionEstimate(seconds: seconds)
        state.position.rate = state.rate
        startPlayback(at: seconds, on: wantedRoute)
    }

    /// Repeat one: the movie starts again from `initialPlaybackTime`, playing, without a finish.
    func replay() {
        state.playback?.perform(.stop)
        let start = state.movieStart
        state.position = PositionEstimate(seconds: start)
        state.position.rate = state.rate
        state.intent = .playing
        startPlayback(at: start, on: wantedRoute)
    }

    /// Replaces the playback with a new one at `seconds`, in the intended state. `pinnedID` makes it a reconnection
    /// to a receiver that must present that key; any other start ends a reconnection in progress.
    func startPlayback(at seconds: Double, on route: [ReceiverDescription]?, pinnedID: String? = nil) {
        guard let url = state.contentURL else { return }
        state.route.started(on: route, reconnecting: pinnedID != nil)
        state.generation += 1
        state.clockStarted = false
        let generation = state.generation
        let report: @Sendable (MoviePlaybackReport) -> Void = { [weak self] report in
            self?.receive(report, generation: generation)
        }
        if route == nil { state.shownOutputs = localOutputs() }
        let path = url.isFileURL ? url.path : url.absoluteString
        let playback: any MoviePlayback =
            if let route, route.isGroup {
                GroupMoviePlayback(
                    path: path, receivers: route, configuration: configuration, startTime: seconds,
                    autoplay: state.intent == .playing, report: report)
            } else if let receiver = route?.first {
                RemoteMoviePlayback(
                    path: path, receiver: receiver, configuration: configuration,
                    startTime: seconds, autoplay: state.intent == .playing, pinnedID: pinnedID, report: report)
            } else {
                LocalMoviePlayback(
                    url: url, outputs: state.shownOutputs ?? localOutputs(), scalingMode: state.scalingMode,
                    startTime: seconds,
                    autoplay: state.intent == .playing, report: report)
            }
        state.playback = playback
        playback.start()
        if state.rate != 1 { playback.perform(.rate(state.rate)) }
        if state.volume != 1 { playback.perform(.volume(state.volume)) }
        if let language = state.subtitleLanguage, Self.isTrackChoice(language, allowsOff: true) {
            playback.perform(.subtitles(language))
        }
        if let language = state.audioLanguage, Self.isTrackChoice(language, allowsOff: false) {
            playback.perform(.audio(language))
        }
        if state.intent == .paused { playback.perform(.pause) }
    }

    /// Carries out a step of the route rules. `afterLoss`: the step follows a lost receiver, which an engine player
    /// that yields by interruption comes back from paused, between an interruption's begin and end (as an audio
    /// session is interrupted).
    func follow(_ step: RouteRules<[ReceiverDescription]>.Step, afterLoss: Bool = false) {
        switch step {
        case .none:
            return
        case .start(let route, let pinnedID):
            let interrupts = afterLoss && pinnedID == nil && role?.yields == .interrupt && state.intent == .playing
            if interrupts {
                state.intent = .paused
                signal(.interruptionBegan)
            }
            move(to: route, pinnedID: pinnedID)
            if interrupts {
                if state.playbackState == .playing { setPlaybackState(.paused) }
                signal(.interruptionEnded)
            }
        case .regroup(let route):
            // The group plays on; members join and leave it in place.
            guard let group = state.playback as? GroupMoviePlayback else {
                preconditionFailure("the route rules regroup a group playback only")
            }
            group.regroup(to: route)
            state.route.regrouped(on: route)
        case .interruptAndReconnect(let route, let pinnedID):
            // The position stands where the receiver was until a playback's clock runs again.
            setPlaybackState(.interrupted)
            move(to: route, pinnedID: pinnedID)
        case .retry(let at):
            let generation = state.generation
            let delay = max(at - Self.routeClock(), .zero)
            let nanoseconds =
                Int(delay.components.seconds) * 1_000_000_000 + Int(delay.components.attoseconds / 1_000_000_000)
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [weak self] in
                guard let self else { return }
                lock.withLock {
                    // Anything that replaced the playback meanwhile (stop, a move, a new movie) ends the retries.
                    guard generation == state.generation else { return }
                    follow(state.route.retryDue())
                }
            }
        }
    }

    /// The route rules' clock: time since the first reading, for deadlines only.
    static func routeClock() -> Duration { routeClockOrigin.duration(to: .now) }

    /// Replaces a loaded movie's playback by one on `route`, at its position and in its playback state.
    private func move(to route: [ReceiverDescription]?, pinnedID: String?) {
        guard let old = state.playback else { return }
        let seconds = currentTime()
        old.perform(.stop)
        if route == nil { setAirPlayVideoActive(false) }
        // The estimate stands until the new playback's clock starts.
        state.position = PositionEstimate(seconds: seconds)
        state.position.rate = state.rate
        startPlayback(at: seconds, on: route, pinnedID: pinnedID)
    }

    /// Drops the playback without a finish (its later reports are ignored); `playing` becomes `paused` unless
    /// `finishing` (a finish follows and says `stopped`).
    func unload(finishing: Bool = false) {
        guard let playback = state.playback else { return }
        playback.perform(.stop)
        state.playback = nil
        state.route.unloaded()
        state.generation += 1
        state.position.rebase(running: false)
        setAirPlayVideoActive(false)
        if !finishing && state.playbackState != .stopped && state.playbackState != .paused { setPlaybackState(.paused) }
    }

    /// Forgets what was known about the movie.
    func resetMovie() {
        if !state.movie.loadState.isEmpty {
            state.movie.facts.loadState = []
            announce(.loadStateDidChange([]))
        }
        if state.movie.readyForDisplay { announce(.readyForDisplayDidChange(false)) }
        state.movie = Movie()
        state.position = PositionEstimate()
    }

    /// Ends the movie: stopped, then the finish.
    func finish(reason: FinishReason, error: CastError?) {
        state.playback = nil
        state.route.unloaded()
        state.generation += 1
        state.position.rebase(running: false)
        setAirPlayVideoActive(false)
        setPlaybackState(.stopped)
        announce(.playbackDidFinish(reason: reason, error: error))
    }

    func setPlaybackState(_ new: PlaybackState) {
        state.position.rebase(running: new == .playing)
        guard state.playbackState != new else { return }
        state.playbackState = new
        announce(.playbackStateDidChange(new))
    }

    func setAirPlayVideoActive(_ active: Bool) {
        guard state.isAirPlayVideoActive != active else { return }
        state.isAirPlayVideoActive = active
        announce(.isAirPlayVideoActiveDidChange(active))
    }

    /// Posts `event` and yields it to every subscriber, after everything announced before it.
    func announce(_ event: MoviePlayerEvent) {
        let subscribers = Array(state.subscribers.values)
        let role = self.role
        delivery.async { [self] in
            role?.observe(.event(event))
            if role?.postsNotifications ?? true {
                NotificationCenter.default.post(name: event.notificationName, object: self, userInfo: event.userInfo)
            }
            for subscriber in subscribers { subscriber.yield(event) }
        }
    }

    /// Tells the owner of an engine player about an interruption, in order with the events.
    func signal(_ signal: EngineSignal) {
        guard let role else { return }
        delivery.async { role.observe(signal) }
    }

    /// The receiver was lost or refused the movie (or a reconnection attempt to it failed): retry it, or play on here
    /// from where it was, as the route rules say.
    func routeLost() {
        follow(state.route.routeLost(candidate: routeCandidate, now: Self.routeClock()), afterLoss: true)
    }

    /// The connection to the receiver broke without a finish: a movie player retries the same receiver (same address,
    /// same key), `.interrupted` at its position meanwhile; an engine player (audio, music) and a route without a key
    /// come back here at once, as from a lost route.
    func connectionBroken(receiverID: String?) {
        let step = state.route.connectionBroken(
            receiverID: receiverID, retries: role == nil, candidate: routeCandidate, now: Self.routeClock())
        follow(step, afterLoss: true)
    }

    // MARK: Reports

    /// A report of the playback of `generation`; ignored when that playback was replaced meanwhile.
    func receive(_ report: MoviePlaybackReport, generation: Int) {
        // The owner decides whether it plays on before the finish is announced to it (outside the lock: the owner's
        // lock is taken before this player's, never after).
        var playsOn = false
        if case .event(.finished(.playbackEnded, _, _)) = report, let role,
            lock.withLock({ generation == state.generation })
        {
            playsOn = role.playsOnAfterEnd()
        }
        let ended = lock.withLock { () -> Bool in
            guard generation == state.generation else { return false }
            switch report {
            case .event(let event): apply(event)
            case .routeLost:
                // The receiver is gone, or a reconnection to it failed.
                routeLost()
            case .connectionBroken(_, let receiverID):
                connectionBroken(receiverID: receiverID)
            }
            return state.playback == nil
        }
        // A finish: another player it interrupted may resume; not between an audio player's loops.
        if ended && !playsOn { releasePlayback() }
    }

    private func apply(_ event: PlaybackEvent) {
        let remote = state.playback?.route != nil
        // While a move starts the new playback, it reports the load states again from `playable`: not a change.
        if case .loadState(let load) = event, !state.clockStarted && load.isSubset(of: state.movie.loadState) { return }
        // The facts, in the reducer every consumer of events shares; what follows is this player's policy: what it
        // announces (some facts once per movie), its own state and position, and the finish.
        let changed = state.movie.facts.apply(event)
        switch event {
        case .loadState(let load):
            if changed.contains(.loadState) { announce(.loadStateDidChange(load)) }
        case .durationAvailable(let seconds):
            guard !state.movie.durationAnnounced else { return }
            state.movie.durationAnnounced = true
            announce(.durationAvailable(seconds))
        case .mediaTypes:
            let mask = state.movie.mediaTypes
            if !state.movie.mediaTypesAnnounced {
                state.movie.mediaTypesAnnounced = true
                announce(.mediaTypesAvailable(mask))
            }
            if remote && mask.contains(.video) { setAirPlayVideoActive(true) }
        case .naturalSize:
            // Announced whenever it changes (a stream that switches resolution), as the seeds post it again.
            guard changed.contains(.naturalSize) || !state.movie.naturalSizeAnnounced else { return }
            state.movie.naturalSizeAnnounced = true
            announce(.naturalSizeAvailable(state.movie.naturalSize))
        case .readyForDisplay:
            if changed.contains(.readyForDisplay) { announce(.readyForDisplayDidChange(true)) }
        case .playbackState(let new):
            applyPlaybackState(new)
        case .position(let seconds, _):
            // Before the clock starts a playback reports where it has not begun yet.
            guard state.clockStarted else { return }
            state.position.set(seconds)
            // endPlaybackTime ends the movie there, as its end would.
            if state.endPlaybackTime > 0 && seconds >= state.endPlaybackTime {
                if state.repeatMode == .one { return replay() }
                unload(finishing: true)
                state.position = PositionEstimate(seconds: state.endPlaybackTime)
                finish(reason: .playbackEnded, error: nil)
            }
        case .videoActive(let active):
            if remote { setAirPlayVideoActive(active) }
        case .accessLog(let entry):
            state.movie.accessLog.append(entry)
        case .errorLog(let entry):
            state.movie.errorLog.append(entry)
        case .metadata(let metadata):
            if changed.contains(.metadata) { announce(.timedMetadataUpdated(metadata)) }
        case .buffered, .tracks, .volume, .rate, .sync, .joinRequest:
            break
        case .finished(.playbackError, _, _) where remote:
            // Another sender took the receiver over, or it could not play the movie: play on here,
            // where a movie that cannot be played finishes with its own error.
            routeLost()
        case .finished(.playbackEnded, _, _) where state.repeatMode == .one:
            replay()
        case .finished(let reason, let error, _):
            finish(reason: reason, error: error.map { CastError(.playback, $0) })
        }
    }

    private func applyPlaybackState(_ new: PlaybackState) {
        // While scrubbing the state is the scrub's; the engine's pause and seeks underneath do not show.
        if state.seeking != nil && new != .stopped {
            if new == .playing { state.clockStarted = true }
            return
        }
        switch new {
        case .playing:
            // A reconnection succeeded once the receiver's clock runs again.
            state.route.clockStarted()
            let first = !state.clockStarted
            state.clockStarted = true
            // A playback started paused reports `playing` once as its clock starts, then `paused`.
            if first && state.intent == .paused {
                state.position.rebase(running: false)
                return
            }
            state.intent = .playing
        case .paused:
            state.intent = .paused
            // Paused by an interruption: the state stays `.interrupted` until it ends.
            if state.interrupted { return }
        case .stopped:
            // The finish follows and says why.
            return
        case .interrupted, .seekingForward, .seekingBackward:
            break
        }
        setPlaybackState(new)
    }
}
