public import CastProtocol
import Foundation

/// Plays one source once: source → demux → decode → clock → audio and video output.
///
/// Thread-safe: every method may be called from any thread. Work happens on threads of the player's own (demux,
/// one decoder per stream, one per output); events are delivered in order on one serial queue, never on those
/// threads' hot loops.
public final class Player: @unchecked Sendable {
    // Invariant: `source`, `configuration`, `onEvent` and the objects below (`events`, `interrupt`, `clock`,
    // `control`, `threads`) are set in init and never replaced; they are thread-safe themselves. Everything in
    // `State` is read and written only under `lock`.
    let source: any MediaSource
    let configuration: PlayerConfiguration
    private let onEvent: @Sendable (PlaybackEvent) -> Void
    private let events = DispatchQueue(label: "CastMedia.Player.events")
    let interrupt = Interrupt()
    let clock = PlaybackClock()
    let control = PlaybackControl()
    let threads = DispatchGroup()

    private struct State {
        var started = false
        var clockStarted = false
        /// The first of stop() or a failure decides how playback finishes.
        var outcome: (reason: FinishReason, error: String?)?
        var queues: [any Abortable] = []
        var finished = false
        var videoActive = false
        var positionTimer: (any DispatchSourceTimer)?
        /// The media times of the outputs' first frames, offered before the start barrier.
        var firstFrameTimes: [Double] = []
    }

    private let lock = NSCondition()
    private var state = State()

    /// A player for `source`; nothing happens until `start()`. `onEvent` receives every event, in order.
    public init(
        source: any MediaSource, configuration: PlayerConfiguration,
        onEvent: @escaping @Sendable (PlaybackEvent) -> Void
    ) {
        self.source = source
        self.configuration = configuration
        self.onEvent = onEvent
    }

    /// Opens, probes and plays, on threads of its own; returns at once. Every failure is reported as
    /// `.finished(reason: .playbackError, error:)` with FFmpeg's message. A second call does nothing.
    public func start() {
        let first = lock.withLock {
            defer { state.started = true }
            return !state.started
        }
        guard first else { return }
        spawnThread(named: "CastMedia.demux", joined: false) { [self] in runDemux() }
    }

    /// Pauses: output stops at once and the clock stands.
    public func pause() {
        let changed = lock.withLock { () -> Bool in
            guard state.started, !state.finished, control.set(.paused) == .playing else { return false }
            if state.clockStarted { clock.pause() }
            return true
        }
        if changed {
            emit(.playbackState(.paused))
            emit(.position(seconds: max(clock.position(), 0), at: Date().timeIntervalSince1970))
        }
    }

    /// Resumes after `pause()`.
    public func resume() {
        let changed = lock.withLock { () -> Bool in
            guard state.started, !state.finished, control.set(.playing) == .paused else { return false }
            if state.clockStarted { clock.resume() }
            return true
        }
        if changed { emit(.playbackState(.playing)) }
    }

    /// Ends playback; it finishes with `.userExited`. Idempotent; unblocks a blocked read.
    public func stop() {
        let started = lock.withLock {
            if state.outcome == nil { state.outcome = (.userExited, nil) }
            return state.started
        }
        shutDown()
        // A player that never started still finishes, so that every start has its end.
        if !started {
            let first = lock.withLock {
                defer { state.started = true }
                return !state.started
            }
            if first { finish() }
        }
    }

    /// Blocks until the finished event was delivered. For tests and tools; never call it on the event queue.
    public func waitUntilFinished() {
        lock.withLock {
            while !state.finished { lock.wait() }
        }
    }

    // MARK: Internals shared by the pipeline's threads

    /// Delivers `event` on the event queue, after every event emitted before it.
    func emit(_ event: PlaybackEvent) {
        events.async { [onEvent] in onEvent(event) }
    }

    /// Records a failure (unless stop() or another failure came first) and shuts the pipeline down.
    func fail(_ error: any Error) {
        lock.withLock {
            if state.outcome == nil { state.outcome = (.playbackError, "\(error)") }
        }
        shutDown()
    }

    /// Whether playback is being torn down.
    var isStopping: Bool { control.current == .stopping }

    /// Registers a queue so that shutDown() aborts it; aborts it at once when already shutting down.
    func register(_ queue: any Abortable) {
        let stopping = lock.withLock {
            state.queues.append(queue)
            return state.outcome != nil
        }
        if stopping { queue.abort() }
    }

    /// Wakes and ends every thread of the pipeline.
    private func shutDown() {
        control.set(.stopping)
        interrupt.raise()
        source.cancel()
        for queue in lock.withLock({ state.queues }) { queue.abort() }
    }

    /// Runs `body` on a thread of its own; `joined` threads are waited for before the player finishes.
    func spawnThread(named name: String, joined: Bool = true, _ body: @escaping @Sendable () -> Void) {
        if joined { threads.enter() }
        let thread = Thread { [threads] in
            body()
            if joined { threads.leave() }
        }
        thread.name = name
        thread.stackSize = 4 << 20
        thread.start()
    }

    /// An output offers the media time of its first frame (nil: it has none) before the start barrier.
    func offerFirstFrame(at time: Double?) {
        guard let time else { return }
        lock.withLock { state.firstFrameTimes.append(time) }
    }

    /// Run by the last output to pass the start barrier: starts the clock at the earliest first frame (or at the
    /// configured start time), and the position events.
    func startClockFromPreroll() {
        let times = lock.withLock { state.firstFrameTimes }
        startClock(at: times.min() ?? configuration.startTime)
    }

    private func startClock(at position: Double) {
        let paused = lock.withLock {
            clock.start(at: position)
            state.clockStarted = true
            if control.current == .paused {
                clock.pause()
                return true
            }
            return false
        }
        emit(.playbackState(.playing))
        if paused { emit(.playbackState(.paused)) }
        startPositionTimer()
    }

    /// Emits `videoActive(true)` once, when the first frame is presented.
    func videoBecameActive() {
        let first = lock.withLock {
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
        lock.withLock { state.positionTimer = timer }
        timer.resume()
    }

    /// The duration once known, to clamp positions.
    var mediaDuration: Double? {
        get { lock.withLock { duration } }
        set { lock.withLock { duration = newValue } }
    }
    private var duration: Double?

    /// Emits the closing events and wakes `waitUntilFinished()`. Called once, after every pipeline thread ended.
    func finish() {
        let (outcome, timer, wasActive) = lock.withLock {
            (state.outcome ?? (.playbackEnded, nil), state.positionTimer, state.videoActive)
        }
        let position = clock.isRunning ? max(clock.position(), 0) : nil
        // Cancelled before the closing events are queued, so no position event can follow the finish.
        timer?.cancel()
        events.async { [self] in
            if let position, outcome.reason == .playbackEnded {
                var seconds = position
                if let duration = mediaDuration { seconds = min(seconds, duration) }
                onEvent(.position(seconds: seconds, at: Date().timeIntervalSince1970))
            }
            if wasActive { onEvent(.videoActive(false)) }
            onEvent(.playbackState(.stopped))
            onEvent(.finished(reason: outcome.reason, error: outcome.error))
            lock.withLock {
                state.finished = true
                lock.broadcast()
            }
        }
    }
}

/// A stage's queue, as far as shutting down is concerned.
protocol Abortable: AnyObject, Sendable {
    /// Wakes every waiter for good.
    func abort()
}

extension BoundedQueue: Abortable {}
