import CastBase
public import CastProtocol
import Foundation

/// Plays one input once (a `MediaSource` or an http(s) URL): input → demux → decode → clock → audio and video output.
///
/// Thread-safe: every method may be called from any thread. Work happens on threads of the player's own (demux,
/// one decoder per stream, one per output); events are delivered in order on one serial queue, never on those
/// threads' hot loops.
///
/// `input`, `configuration`, `onEvent` and the objects below (`events`, `interrupt`, `clock`, `control`, `threads`)
/// are set in init and never replaced, and thread-safe themselves; everything else is in `State`, in one `Monitor`.
public final class Player: Sendable {
    let input: MediaInput
    let configuration: PlayerConfiguration
    private let onEvent: @Sendable (PlaybackEvent) -> Void
    private let events = DispatchQueue(label: "CastMedia.Player.events")
    let interrupt = Interrupt()
    let clock: PlaybackClock
    let control: PlaybackControl
    let threads = DispatchGroup()
    /// Where presentation times are recorded (`PlayerConfiguration.timingLog`), if anywhere.
    let timingLog: TimingLog?

    struct State {
        var started = false
        var clockStarted = false
        /// The first of stop() or a failure decides how playback finishes.
        var outcome: (reason: FinishReason, error: String?)?
        var queues: [any StageQueue] = []
        var finished = false
        /// Between a seek and the moment every output holds its first frame of the new segment: the clock stands.
        var seeking = false
        /// A scheduled resume's instant (CLOCK_MONOTONIC ns), taken by whatever starts the clock next
        /// (`startClock`): the resume itself, the start barrier, the end of a stall.
        var resumeAt: UInt64?
        /// Where the group's timeline began for this member (its last scheduled resume), and the first alignment
        /// since (Player+Group.swift); nil when no scheduled resume started playback, or a seek left that timeline.
        var alignment: GroupAlignment?
        /// A self-paced audio device's drift from the clock while it follows a group (the audio output's
        /// `DriftCompensation`): its offset (nil while it is calibrated) and the correction, in ppm of the rate.
        var deviceDrift: (offset: Double?, ppm: Double)?
        /// A seek asked for before playback started, carried out as soon as it starts.
        var pendingSeek: (seconds: Double, exact: Bool)?
        /// Software volume (0...1) and mute, applied to the samples before they reach the device.
        var volume = 1.0
        var muted = false
        var videoActive = false
        var positionTimer: (any DispatchSourceTimer)?
        /// Whether the input can seek: a source says so at once; a URL is taken to until it is opened.
        var seekable = true
        /// Load state, stalls and what the buffer holds (Player+Buffering.swift).
        var buffering = BufferingState()
        /// What the access log reports (Player+Logs.swift).
        var log = LogState()
        /// Video frames a window did not show because they were already late by a whole frame.
        var droppedVideoFrames = 0
        /// What the video output draws over each frame (Player+Subtitles.swift); nil: no subtitles shown.
        var subtitleOverlay: SubtitleOverlay?
        /// A subtitle track asked for while playing (`selectSubtitles`), not yet opened by the demux thread.
        var subtitleChoice: String?
        /// An audio track asked for while playing (`selectAudio`), not yet opened by the demux thread.
        var audioChoice: String?
        /// The tracks last announced (`tracks`), so that turning subtitles off is announced at once.
        var tracks: [MediaTrack] = []
        /// The duration once known, to clamp positions.
        var duration: Double?
    }

    // Internal (not private) for the extensions in Player+*.swift. Helpers that work inside it take the state as
    // their first argument (`startClock(&state) { … }`).
    let shared: Monitor<State>

    /// A player for `input`; nothing happens until `start()`. `onEvent` receives every event, in order.
    public init(
        input: MediaInput, configuration: PlayerConfiguration,
        onEvent: @escaping @Sendable (PlaybackEvent) -> Void
    ) {
        self.input = input
        self.configuration = configuration
        self.onEvent = onEvent
        let control = PlaybackControl(startTime: configuration.startTime)
        self.control = control
        // Every change of the clock wakes the outputs sleeping towards a due time on it.
        clock = PlaybackClock(onChange: { control.clockChanged() })
        var timingLog: TimingLog?
        if let path = configuration.timingLog {
            do {
                timingLog = try TimingLog(path: path)
            } catch {
                configuration.log("no timing log: \(error)")
            }
        }
        self.timingLog = timingLog
        var initial = State()
        if case .source(let source) = input { initial.seekable = source.isSeekable }
        shared = Monitor(initial)
        // shouldAutoplay off: everything loads, the first frame is shown, and playback waits for resume().
        if !configuration.autoplay { control.set(.paused) }
    }

    /// A player for `source`; nothing happens until `start()`. `onEvent` receives every event, in order.
    public convenience init(
        source: any MediaSource, configuration: PlayerConfiguration,
        onEvent: @escaping @Sendable (PlaybackEvent) -> Void
    ) {
        self.init(input: .source(source), configuration: configuration, onEvent: onEvent)
    }

    /// A player for an `http://` or `https://` URL, opened by FFmpeg's own protocols (HLS included; basic
    /// credentials in the userinfo, percent-encoded). Any other scheme (`file:`, `concat:`, ...) finishes with
    /// `playbackError` at `start()`. See `URLInput` for the limits, and `MediaInput.url` for `proxy`.
    public convenience init(
        url: String, proxy: String? = nil, formats: URLFormats = .any, configuration: PlayerConfiguration,
        onEvent: @escaping @Sendable (PlaybackEvent) -> Void
    ) {
        self.init(input: .url(url, proxy: proxy, formats: formats), configuration: configuration, onEvent: onEvent)
    }

    /// The source, when the input is one.
    var source: (any MediaSource)? {
        if case .source(let source) = input { return source }
        return nil
    }

    /// Whether the input can seek (known once it is opened).
    var isSeekable: Bool {
        get { shared.withLock { state in state.seekable } }
        set { shared.withLock { state in state.seekable = newValue } }
    }

    /// Opens, probes and plays, on threads of its own; returns at once. Every failure is reported as
    /// `.finished(reason: .playbackError, error:)` with FFmpeg's message. A second call does nothing.
    public func start() {
        let first = shared.withLock { state in
            defer { state.started = true }
            return !state.started
        }
        guard first else { return }
        shared.withLock { state in state.log.requested = configuration.requestDate ?? Date() }
        spawnThread(named: "CastMedia.demux", joined: false) { [self] in runDemux() }
    }

    /// Pauses: output stops at once (the audio device drops what it holds) and the clock stands.
    public func pause() {
        shared.withLock { state in
            guard state.started, !state.finished, control.set(.paused) == .playing else { return }
            if state.clockStarted { clock.pause() }
            // A group resumes its members at a new instant: the timeline they followed ends here.
            state.alignment = nil
            // Emitted under the lock, so that they keep their order with a seek's events.
            emit(.playbackState(.paused))
            emit(.position(seconds: max(clock.position(), 0), at: Date().timeIntervalSince1970))
        }
    }

    /// Resumes after `pause()`, from the sample where the pause stopped; with `instant` (CLOCK_MONOTONIC nanoseconds),
    /// exactly then: the clock stands until that instant and the outputs begin their samples and pictures by it (a
    /// group's start, docs/multiroom.md). `playing` is reported at once.
    public func resume(at instant: UInt64? = nil) {
        shared.withLock { state in
            guard state.started, !state.finished, control.set(.playing) == .paused else { return }
            state.resumeAt = instant
            // While seeking the clock stands until the new segment starts it; while stalled, until the buffer
            // refilled (playback stays interrupted until then).
            let stalled = state.buffering.rule.isStalled
            if state.clockStarted && !state.seeking && !stalled { startClock(&state) { clock.resume(time: $0) } }
            emit(.playbackState(stalled ? .interrupted : .playing))
        }
    }

    /// Moves playback to `seconds` (clamped to the media): `exact` presents the frame whose interval contains it and
    /// begins audio there (decoding forward from the preceding key frame); otherwise playback begins at the key frame
    /// at or before it. Reports `seekingForward` or `seekingBackward` (from the current position), then, once the
    /// new frame is held, the state it interrupted (`playing` or `paused`: a paused player shows the new frame and
    /// stays paused) and the new position. Seeks may follow each other quickly; only the latest is played.
    ///
    /// On a source that cannot seek (a stream), or once playback ended, the seek is ignored and nothing is reported:
    /// playback carries on, and its position events say where it is.
    public func seek(to seconds: Double, exact: Bool) {
        guard seconds.isFinite else { return }
        shared.withLock { state in
            guard state.seekable, state.started, !state.finished, state.outcome == nil else { return }
            guard state.clockStarted else {
                state.pendingSeek = (seconds, exact)
                return
            }
            let target = clamped(seconds, in: state)
            let from = clock.position()
            // The serial moves in the queues first: whatever a stage still puts for the old position is dropped.
            // Then the outputs learn it (they drop what they hold), then the demux thread seeks.
            let serial = control.segment.serial + 1
            for queue in state.queues { queue.flush(serial: serial) }
            guard control.beginSegment(target: target, exact: exact) != nil else { return }
            // A seek starts over: a stall ends here, and the new segment is judged on its own buffer.
            endStallForSeek(&state)
            clock.pause(at: target)
            state.seeking = true
            emit(.playbackState(target >= from ? .seekingForward : .seekingBackward))
        }
    }

    /// Sets the volume, 0 (silence) to 1 (as decoded), clamped; applied to the samples before they are written to the
    /// device, so it is heard from the next period on.
    public func setVolume(_ volume: Double) {
        shared.withLock { state in state.volume = volume.isNaN ? 1 : min(max(volume, 0), 1) }
    }

    /// Mutes or unmutes the audio, keeping the volume.
    public func setMuted(_ muted: Bool) {
        shared.withLock { state in state.muted = muted }
    }

    /// Sets the playback rate, 0.5 to 2 (clamped): video is paced by the clock at that rate, audio keeps its pitch
    /// (libavfilter's atempo). Positions stay in media time.
    public func setRate(_ rate: Double) {
        guard !rate.isNaN else { return }
        shared.withLock { state in clock.setRate(min(max(rate, 0.5), 2)) }
    }

    /// How many video frames were decoded but not shown because they came too late (the next frame was already due);
    /// only windows drop frames. Grows during playback; final once it finished.
    public var droppedVideoFrames: Int { shared.withLock { state in state.droppedVideoFrames } }

    /// Counts a frame the video output dropped.
    func countDroppedFrame() { shared.withLock { state in state.droppedVideoFrames += 1 } }

    /// The factor the audio output multiplies samples by.
    var gain: Double { shared.withLock { state in state.muted ? 0 : state.volume } }

    /// Ends playback; it finishes with `.userExited`. Idempotent; unblocks a blocked read.
    public func stop() {
        let started = shared.withLock { state in
            if state.outcome == nil { state.outcome = (.userExited, nil) }
            return state.started
        }
        shutDown()
        // A player that never started still finishes, so that every start has its end.
        if !started {
            let first = shared.withLock { state in
                defer { state.started = true }
                return !state.started
            }
            if first { finish() }
        }
    }

    /// Blocks until the finished event was delivered. For tests and tools; never call it on the event queue.
    public func waitUntilFinished() {
        shared.wait(until: { $0.finished })
    }

    // MARK: Internals shared by the pipeline's threads

    /// Delivers `event` on the event queue, after every event emitted before it.
    func emit(_ event: PlaybackEvent) {
        events.async { [onEvent] in onEvent(event) }
    }

    /// Records a failure (unless stop() or another failure came first) and shuts the pipeline down.
    func fail(_ error: any Error) {
        let first = shared.withLock { state in
            guard state.outcome == nil else { return false }
            state.outcome = (.playbackError, "\(error)")
            return true
        }
        if first { emit(.errorLog(errorLogEntry(for: error))) }
        shutDown()
    }

    /// Whether playback is being torn down.
    var isStopping: Bool { control.current == .stopping }

    /// Registers a queue so that a seek flushes it and shutDown() aborts it; aborts it at once when already
    /// shutting down.
    func register(_ queue: any StageQueue) {
        let stopping = shared.withLock { state in
            state.queues.append(queue)
            return state.outcome != nil
        }
        if stopping { queue.abort() }
    }

    /// Aborts every queue, which ends the decode threads (they outlive the end of the input, waiting for a seek).
    func releaseQueues() {
        for queue in shared.withLock({ state in state.queues }) { queue.abort() }
    }

    /// Wakes and ends every thread of the pipeline.
    private func shutDown() {
        control.set(.stopping)
        interrupt.raise()
        source?.cancel()
        for queue in shared.withLock({ state in state.queues }) { queue.abort() }
    }

    /// Runs `body` on a thread of its own; `joined` threads are waited for before the player finishes.
    func spawnThread(named name: String, joined: Bool = true, _ body: @escaping @Sendable () -> Void) {
        if joined { threads.enter() }
        startDetachedThread(name: name, stackSize: 4 << 20) { [threads] in
            body()
            if joined { threads.leave() }
        }
    }

    /// Run by the last output to pass a segment's start barrier, with the media times of the outputs' first frames:
    /// starts the clock and returns its anchor, or nil when a newer seek superseded the segment meanwhile.
    ///
    /// At start-up the clock starts at the earliest first frame (or the configured start time); after an exact seek
    /// at the target; after a key-frame seek at the latest first frame (the key frame; audio before it is trimmed).
    /// A seek returns to the state it interrupted, paused or playing, and reports the new position at once.
    func startSegment(_ segment: PlaybackControl.Segment, firstFrames times: [Double]) -> Double? {
        var startTimer = false
        let anchor = shared.withLock { state -> Double? in
            guard control.segment.serial == segment.serial else { return nil }
            let target = segment.target ?? configuration.startTime
            var anchor: Double
            if segment.serial == 0 {
                anchor = times.min() ?? target
            } else if segment.exact {
                anchor = target
            } else {
                // The key frame: the demuxer lands audio a little before it, and that audio is trimmed.
                anchor = times.max() ?? target
            }
            anchor = max(anchor, 0)
            let paused = control.current == .paused
            // At start-up on a link slower than the film, the clock stands until playthrough is OK (one wait first).
            var waits = false
            if paused || segment.serial == 0 {
                clock.start(at: anchor)
                clock.pause()
                waits = !paused && waitToStartLocked(&state)
            }
            if !paused && !waits { startClock(&state) { clock.start(at: anchor, time: $0) } }
            if segment.serial > 0 { state.alignment = nil }
            if segment.serial == 0 {
                state.clockStarted = true
                // Playback starts now, or once the wait before the start ends (`checkBuffering`).
                if !waits { state.log.firstFrame = Date() }
                startTimer = true
                // Without autoplay the player was never playing: it reports paused only.
                if waits {
                    emit(.loadState(.stalled))
                    emit(.playbackState(.interrupted))
                } else if configuration.autoplay || !paused {
                    emit(.playbackState(.playing))
                }
                if paused { emit(.playbackState(.paused)) }
            } else {
                state.seeking = false
                emit(.playbackState(paused ? .paused : .playing))
                emit(.position(seconds: clamped(anchor, in: state), at: Date().timeIntervalSince1970))
            }
            return anchor
        }
        if startTimer { startPositionTimer() }
        let pending = shared.withLock { state in
            defer { state.pendingSeek = nil }
            return state.pendingSeek
        }
        if let pending { seek(to: pending.seconds, exact: pending.exact) }
        return anchor
    }

    /// `seconds` within the media's duration, when known.
    private func clamped(_ seconds: Double, in state: State) -> Double {
        guard let duration = state.duration else { return max(seconds, 0) }
        return min(max(seconds, 0), duration)
    }

    /// Emits `videoActive(true)` once, when the first frame is presented.
    func videoBecameActive() {
        let first = shared.withLock { state in
            defer { state.videoActive = true }
            return !state.videoActive
        }
        if first { emit(.videoActive(true)) }
    }

    private func startPositionTimer() {
        let timer = DispatchSource.makeTimerSource(queue: events)
        timer.schedule(deadline: .now() + .milliseconds(200), repeating: .milliseconds(200), leeway: .milliseconds(10))
        timer.setEventHandler { [self] in
            guard control.current == .playing, clock.isRunning else { return }
            var seconds = max(clock.position(), 0)
            if let duration = mediaDuration { seconds = min(seconds, duration) }
            onEvent(.position(seconds: seconds, at: Date().timeIntervalSince1970))
        }
        shared.withLock { state in state.positionTimer = timer }
        timer.resume()
    }

    /// The duration once known, to clamp positions.
    var mediaDuration: Double? {
        get { shared.withLock { $0.duration } }
        set { shared.withLock { $0.duration = newValue } }
    }

    /// Emits the closing events and wakes `waitUntilFinished()`. Called once, after every pipeline thread ended.
    func finish() {
        let (outcome, timer, wasActive, monitor) = shared.withLock { state in
            (state.outcome ?? (.playbackEnded, nil), state.positionTimer, state.videoActive, state.buffering.monitor)
        }
        let position = clock.isRunning ? max(clock.position(), 0) : nil
        // Cancelled before the closing events are queued, so no position event can follow the finish.
        timer?.cancel()
        monitor?.cancel()
        let accessLog = accessLogEntry(closing: true)
        events.async { [self] in
            if let position, outcome.reason == .playbackEnded {
                var seconds = position
                if let duration = mediaDuration { seconds = min(seconds, duration) }
                onEvent(.position(seconds: seconds, at: Date().timeIntervalSince1970))
            }
            // The log before the closing pair, which stays `playbackState stopped`, `finished`.
            onEvent(.accessLog(accessLog))
            if wasActive { onEvent(.videoActive(false)) }
            onEvent(.playbackState(.stopped))
            onEvent(.finished(reason: outcome.reason, error: outcome.error))
            shared.withLock { $0.finished = true }
        }
    }
}

/// A stage's queue, as far as seeking and shutting down are concerned.
protocol StageQueue: AnyObject, Sendable {
    /// Drops every item and moves to `serial`: what is put with an older serial is dropped.
    func flush(serial: Int)
    /// Wakes every waiter for good.
    func abort()
}

extension BoundedQueue: StageQueue {}
