import CastBase
import CastProtocol
import Foundation

/// Where the route rules' clock counts from.
private let routeClockOrigin = ContinuousClock.now

// Everything here runs under the player's mutex: `state` is its value.
extension MoviePlayerController {
    /// The receivers this player may play on: the selection while `allowsAirPlay`, those that play this player's
    /// media; nil when none.
    func routeCandidate(in state: State) -> [ReceiverDescription]? {
        guard state.allowsAirPlay else { return nil }
        var selection = CastRoute.selection
        // An AirPlay speaker plays sound only: audio and music players go there, movies stay here.
        if role == nil { selection.removeAll { $0.kind == .speaker } }
        // A group plays a file (served to every member) or an http(s) URL (each member opens it) alike.
        return selection.isEmpty ? nil : selection
    }

    /// Whether the movie should play on receivers, and which (the route rules: not the route that failed).
    func wantedRoute(in state: State) -> [ReceiverDescription]? {
        state.route.wanted(candidate: routeCandidate(in: state))
    }

    /// Loads the movie at `seconds` where it should play now, playing or paused.
    func load(from seconds: Double, playing: Bool, in state: inout State) {
        guard let url = state.contentURL else { return }
        let scheme = url.scheme?.lowercased()
        guard url.isFileURL || scheme == "http" || scheme == "https" else {
            let message = "\(url) is neither a file nor an http(s) URL"
            finish(reason: .playbackError, error: CastError(.usage, message), in: &state)
            return
        }
        if !state.sourceTypeGiven && state.movieSourceType == .unknown {
            state.movieSourceType = url.isFileURL ? .file : .streaming
            announce(.sourceTypeAvailable(state.movieSourceType), in: state)
        }
        state.intent = playing ? .playing : .paused
        state.position = PositionEstimate(seconds: seconds)
        state.position.rate = state.rate
        // Prepared again once this load can play (`isPreparedToPlay`).
        state.movie.prepared = false
        startPlayback(at: seconds, on: wantedRoute(in: state), in: &state)
    }

    /// Repeat one: the movie starts again from `initialPlaybackTime`, playing, without a finish.
    func replay(in state: inout State) {
        state.playback?.perform(.stop)
        let start = state.movieStart
        state.position = PositionEstimate(seconds: start)
        state.position.rate = state.rate
        state.intent = .playing
        startPlayback(at: start, on: wantedRoute(in: state), in: &state)
    }

    /// Replaces the playback with a new one at `seconds`, in the intended state. `pinnedID` makes it a reconnection
    /// to a receiver that must present that key; any other start ends a reconnection in progress.
    func startPlayback(
        at seconds: Double, on route: [ReceiverDescription]?, pinnedID: String? = nil, in state: inout State
    ) {
        guard let url = state.contentURL else { return }
        state.route.started(on: route, reconnecting: pinnedID != nil)
        state.generation += 1
        state.clockStarted = false
        let generation = state.generation
        // Each playback has its access log entry; a reconnection gets one when it reports (it may never connect).
        if pinnedID == nil { state.movie.beginAccessLogEntry(generation: generation) }
        let report: @Sendable (MoviePlaybackReport) -> Void = { [weak self] report in
            self?.receive(report, generation: generation)
        }
        if route == nil { state.shownOutputs = localOutputs(in: state) }
        let path = url.isFileURL ? url.path : url.absoluteString
        // The group the last file played on goes on when this one plays from its start on the same selection.
        var carried = state.carriedGroup
        state.carriedGroup = nil
        if let group = carried, route != group.selection || seconds > 0 {
            group.close()
            carried = nil
        }
        let playback: any MoviePlayback =
            if let route, route.isGroup {
                GroupMoviePlayback(
                    path: path, receivers: route, configuration: configuration, startTime: seconds,
                    autoplay: state.intent == .playing, carried: carried, report: report)
            } else if let receiver = route?.first {
                RemoteMoviePlayback(
                    path: path, receiver: receiver, configuration: configuration,
                    startTime: seconds, autoplay: state.intent == .playing, pinnedID: pinnedID, report: report)
            } else {
                LocalMoviePlayback(
                    url: url, outputs: state.shownOutputs ?? localOutputs(in: state), scalingMode: state.scalingMode,
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
    func follow(_ step: RouteRules<[ReceiverDescription]>.Step, afterLoss: Bool = false, in state: inout State) {
        switch step {
        case .none:
            return
        case .start(let route, let pinnedID):
            let interrupts = afterLoss && pinnedID == nil && role?.yields == .interrupt && state.intent == .playing
            if interrupts {
                state.intent = .paused
                signal(.interruptionBegan)
            }
            move(to: route, pinnedID: pinnedID, in: &state)
            if interrupts {
                if state.playbackState == .playing { setPlaybackState(.paused, in: &state) }
                signal(.interruptionEnded)
            }
        case .regroup(let route):
            // The group plays on; members join and leave it in place.
            guard let playback = state.playback else { preconditionFailure("the route rules regroup a playback only") }
            playback.regroup(to: route)
            state.route.regrouped(on: route)
        case .adopt(let route):
            // What plays alone plays on into the group: the same generation, no load, no state change.
            let generation = state.generation
            let report: @Sendable (MoviePlaybackReport) -> Void = { [weak self] report in
                self?.receive(report, generation: generation)
            }
            guard
                let group = state.playback?.adopted(
                    into: route, playing: state.intent == .playing, report: report)
            else { return follow(.start(on: route, pinnedID: nil), in: &state) }
            state.playback = group
            group.start()
            state.route.adopted(on: route)
        case .interruptAndReconnect(let route, let pinnedID):
            // The position stands where the receiver was until a playback's clock runs again.
            setPlaybackState(.interrupted, in: &state)
            move(to: route, pinnedID: pinnedID, in: &state)
        case .retry(let at):
            let generation = state.generation
            let delay = max(at - Self.routeClock(), .zero)
            let nanoseconds =
                Int(delay.components.seconds) * 1_000_000_000 + Int(delay.components.attoseconds / 1_000_000_000)
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [weak self] in
                guard let self else { return }
                // `self.state`: this closure runs later, on its own, and takes the mutex.
                self.state.withLock { state in
                    // Anything that replaced the playback meanwhile (stop, a move, a new movie) ends the retries.
                    guard generation == state.generation else { return }
                    follow(state.route.retryDue(), in: &state)
                }
            }
        }
    }

    /// The route rules' clock: time since the first reading, for deadlines only.
    static func routeClock() -> Duration { routeClockOrigin.duration(to: .now) }

    /// Replaces a loaded movie's playback by one on `route`, at its position and in its playback state.
    private func move(to route: [ReceiverDescription]?, pinnedID: String?, in state: inout State) {
        guard let old = state.playback else { return }
        let seconds = state.currentTime
        old.perform(.stop)
        if route == nil { setAirPlayVideoActive(false, in: &state) }
        // The estimate stands until the new playback's clock starts.
        state.position = PositionEstimate(seconds: seconds)
        state.position.rate = state.rate
        startPlayback(at: seconds, on: route, pinnedID: pinnedID, in: &state)
    }

    /// Drops the playback without a finish (its later reports are ignored); `playing` becomes `paused` unless
    /// `finishing` (a finish follows and says `stopped`).
    func unload(finishing: Bool = false, in state: inout State) {
        guard let playback = state.playback else { return }
        playback.perform(.stop)
        state.playback = nil
        state.route.unloaded()
        state.generation += 1
        state.position.rebase(running: false)
        setAirPlayVideoActive(false, in: &state)
        if !finishing && state.playbackState != .stopped && state.playbackState != .paused {
            setPlaybackState(.paused, in: &state)
        }
    }

    /// Forgets what was known about the movie.
    func resetMovie(in state: inout State) {
        if !state.movie.loadState.isEmpty {
            state.movie.facts.loadState = []
            announce(.loadStateDidChange([]), in: state)
        }
        if state.movie.readyForDisplay { announce(.readyForDisplayDidChange(false), in: state) }
        state.movie = Movie()
        state.position = PositionEstimate()
    }

    /// Ends the movie: stopped, then the finish.
    func finish(reason: FinishReason, error: CastError?, in state: inout State) {
        state.playback = nil
        state.route.unloaded()
        state.generation += 1
        state.position.rebase(running: false)
        setAirPlayVideoActive(false, in: &state)
        setPlaybackState(.stopped, in: &state)
        announce(.playbackDidFinish(reason: reason, error: error), in: state)
    }

    func setPlaybackState(_ new: PlaybackState, in state: inout State) {
        state.position.rebase(running: new == .playing)
        guard state.playbackState != new else { return }
        state.playbackState = new
        announce(.playbackStateDidChange(new), in: state)
    }

    func setAirPlayVideoActive(_ active: Bool, in state: inout State) {
        guard state.isAirPlayVideoActive != active else { return }
        state.isAirPlayVideoActive = active
        announce(.isAirPlayVideoActiveDidChange(active), in: state)
    }

    /// Posts `event` and yields it to every subscriber, after everything announced before it.
    func announce(_ event: MoviePlayerEvent, in state: State) {
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

    /// Runs `work` on the delivery queue after everything announced so far: an owner that posts notifications of its
    /// own posts them here, so that they come in one order with what the engine reports.
    func deliver(_ work: @escaping @Sendable () -> Void) {
        delivery.async(execute: work)
    }

    /// The receiver was lost or refused the movie (or a reconnection attempt to it failed): retry it, or play on here
    /// from where it was, as the route rules say.
    func routeLost(in state: inout State) {
        let step = state.route.routeLost(candidate: routeCandidate(in: state), now: Self.routeClock())
        follow(step, afterLoss: true, in: &state)
    }

    /// The connection to the receiver broke without a finish: a movie player retries the same receiver (same address,
    /// same key), `.interrupted` at its position meanwhile; an engine player (audio, music) and a route without a key
    /// come back here at once, as from a lost route.
    func connectionBroken(receiverID: String?, in state: inout State) {
        let step = state.route.connectionBroken(
            receiverID: receiverID, retries: role == nil, candidate: routeCandidate(in: state), now: Self.routeClock())
        follow(step, afterLoss: true, in: &state)
    }

    // MARK: Reports

    /// A report of the playback of `generation`; ignored when that playback was replaced meanwhile.
    func receive(_ report: MoviePlaybackReport, generation: Int) {
        // The owner decides whether it plays on before the finish is announced to it (outside the mutex: an owner is
        // never called while it is held).
        var playsOn = false
        if case .event(.finished(.playbackEnded, _, _)) = report, let role,
            state.withLock({ generation == $0.generation })
        {
            playsOn = role.playsOnAfterEnd()
        }
        let ended = state.withLock { state -> Bool in
            // A playback stopped or replaced still closes its access log entry.
            if case .event(.accessLog(let entry)) = report {
                state.movie.updateAccessLog(entry, generation: generation, current: state.generation)
            }
            if case .groupCarried(let group) = report {
                // Kept for the next file (`startPlayback`), unless this playback was replaced meanwhile.
                state.carriedGroup?.close()
                state.carriedGroup = generation == state.generation ? group : nil
                if generation != state.generation { group.close() }
                return false
            }
            guard generation == state.generation else { return false }
            switch report {
            case .event(let event): apply(event, in: &state)
            case .routeLost:
                // The receiver is gone, or a reconnection to it failed.
                routeLost(in: &state)
            case .connectionBroken(_, let receiverID):
                connectionBroken(receiverID: receiverID, in: &state)
            case .groupCarried:
                break
            case .adoptionFailed:
                // What played alone stopped: the group starts afresh where it was, as a move.
                follow(.start(on: wantedRoute(in: state), pinnedID: nil), in: &state)
            }
            return state.playback == nil
        }
        // A finish: another player it interrupted may resume; not between an audio player's loops.
        if ended && !playsOn { releasePlayback() }
    }

    private func apply(_ event: PlaybackEvent, in state: inout State) {
        let remote = state.playback?.route != nil
        if case .loadState(let load) = event, load.contains(.playable) { state.movie.prepared = true }
        // While a move starts the new playback, it reports the load states again from `playable`: not a change.
        if case .loadState(let load) = event, !state.clockStarted && load.isSubset(of: state.movie.loadState) { return }
        // The facts, in the reducer every consumer of events shares; what follows is this player's policy: what it
        // announces (some facts once per movie), its own state and position, and the finish.
        let changed = state.movie.facts.apply(event)
        switch event {
        case .loadState(let load):
            if changed.contains(.loadState) { announce(.loadStateDidChange(load), in: state) }
        case .durationAvailable(let seconds):
            guard !state.movie.durationAnnounced else { return }
            state.movie.durationAnnounced = true
            announce(.durationAvailable(seconds), in: state)
        case .mediaTypes:
            let mask = state.movie.mediaTypes
            if !state.movie.mediaTypesAnnounced {
                state.movie.mediaTypesAnnounced = true
                announce(.mediaTypesAvailable(mask), in: state)
            }
            if remote && mask.contains(.video) { setAirPlayVideoActive(true, in: &state) }
        case .naturalSize:
            // Announced whenever it changes (a stream that switches resolution), as the seeds post it again.
            guard changed.contains(.naturalSize) || !state.movie.naturalSizeAnnounced else { return }
            state.movie.naturalSizeAnnounced = true
            announce(.naturalSizeAvailable(state.movie.naturalSize), in: state)
        case .readyForDisplay:
            if changed.contains(.readyForDisplay) { announce(.readyForDisplayDidChange(true), in: state) }
        case .playbackState(let new):
            applyPlaybackState(new, in: &state)
        case .position(let seconds, _):
            // Before the clock starts a playback reports where it has not begun yet.
            guard state.clockStarted else { return }
            state.position.set(seconds)
            askForAccessLog(in: &state)
            // endPlaybackTime ends the movie there, as its end would.
            if state.endPlaybackTime > 0 && seconds >= state.endPlaybackTime {
                if state.repeatMode == .one { return replay(in: &state) }
                unload(finishing: true, in: &state)
                state.position = PositionEstimate(seconds: state.endPlaybackTime)
                finish(reason: .playbackEnded, error: nil, in: &state)
            }
        case .videoActive(let active):
            if remote { setAirPlayVideoActive(active, in: &state) }
        case .accessLog:
            // Taken in `receive`, for this playback and those before it.
            break
        case .errorLog(let entry):
            state.movie.errorLog.append(entry)
        case .metadata(let metadata):
            if changed.contains(.metadata) { announce(.timedMetadataUpdated(metadata), in: state) }
        case .buffered, .tracks, .volume, .rate, .sync, .scheduledStart, .joinRequest, .skipRequest,
            .moveRequest:
            break
        case .finished(.playbackError, _, _) where remote:
            // Another sender took the receiver over, or it could not play the movie: play on here,
            // where a movie that cannot be played finishes with its own error.
            routeLost(in: &state)
        case .finished(.playbackEnded, _, _) where state.repeatMode == .one:
            replay(in: &state)
        case .finished(let reason, let error, _):
            finish(reason: reason, error: error.map { CastError(.playback, $0) }, in: &state)
        }
    }

    /// While it plays, the playback is asked for its access log entry about once a second, so that `accessLog` shows
    /// the current playback as it goes (the answer is an `accessLog` event).
    private func askForAccessLog(in state: inout State) {
        let now = ContinuousClock.now
        if let asked = state.movie.accessLogAsked, now - asked < Self.accessLogInterval { return }
        state.movie.accessLogAsked = now
        state.playback?.perform(.accessLog)
    }

    /// How often a playing movie's access log entry is brought up to date.
    static let accessLogInterval = Duration.seconds(1)

    private func applyPlaybackState(_ new: PlaybackState, in state: inout State) {
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
        setPlaybackState(new, in: &state)
    }
}
