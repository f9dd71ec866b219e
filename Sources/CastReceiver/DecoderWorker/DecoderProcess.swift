import CastBase
import CastMedia
import CastProtocol
import CastSecurity
import CastSystem
import Foundation
import Glibc

/// A session's engine in a worker process (castd re-executed with `--session-worker`): demux, decode and the
/// outputs run there; castd keeps the network. It serves the worker's reads of served media from the session's
/// `ServedMedia` (a `RemoteSource`, or a picture castd holds), forwards controls, and hands the worker's events,
/// checked, to the session. A worker that dies or breaks the channel's rules ends the session with `playbackError`
/// saying so; castd goes on.
///
/// A worker of a `window` or `fullscreen` session opens its own window (the same CastMedia renderer as castd's);
/// castd's idle window (`idleWindow`) steps aside once the worker presents its first picture, and comes back when the
/// worker has exited, whatever ended it: its window is gone with its display connection by then.
///
/// Threads: a reader (the worker's messages, events delivered in order on it; the only thread that kills and reaps
/// the worker) and, for served media, a server (blocking reads of the sender's media connection, so that events
/// never wait behind media bytes), which answers the worker's reads, or for a mirror session pushes the live stream
/// to the worker as it arrives.
///
/// Thread-safety: the mutable state is in a `Monitor` (the server waits on it for reads); the channel is thread-safe
/// for sending.
final class DecoderProcess: PlaybackDriver, Sendable {
    private let source: (any ServedMedia)?
    /// How the worker's URL, if any, reaches the network.
    private let urlAccess: URLAccess
    private let onEvent: @Sendable (PlaybackEvent) -> Void
    private let logger: Logger
    /// castd's idle window, hidden while the worker shows video in its own; nil without one.
    private let idleWindow: VideoWindow?
    private struct State {
        var startMessage: WorkerStart
        var channel: WorkerChannel?
        var pid: pid_t?
        /// castd's proxy on the worker's loopback, for a URL; stopped once the worker is gone.
        var proxy: CheckedProxy?
        var started = false
        var stopping = false
        var closed = false
        /// Controls asked for before the worker runs; sent after the start message.
        var pending: [PlaybackControl.Action] = []
        /// Reads the worker asked for and the server has not taken yet.
        var reads: [MediaRead] = []
    }

    private let state: Monitor<State>

    /// How long a stopped worker may take to finish before it is killed.
    static let stopGrace: Duration = .seconds(3)
    /// Reads a worker may have waiting: as many as it keeps in flight (`ChannelSource`); one more breaks the rules.
    static let maximumWaitingReads = ChannelSource.sessionReadsInFlight

    /// An engine for `start`'s media, read from `source` when served (nil for a URL, which reaches the network as
    /// `urlAccess` says). `idleWindow` steps aside while the worker shows video in a window.
    init(
        start: WorkerStart, source: (any ServedMedia)?, urlAccess: URLAccess = .paired, idleWindow: VideoWindow? = nil,
        logger: Logger = .standardError(),
        onEvent: @escaping @Sendable (PlaybackEvent) -> Void
    ) {
        self.logger = logger
        self.state = Monitor(State(startMessage: start))
        self.source = source
        self.urlAccess = urlAccess
        self.idleWindow = start.window == nil ? nil : idleWindow
        self.onEvent = onEvent
    }

    /// The worker's pid while it runs (tests find it as castd's child).
    var workerPID: pid_t? { state.withLock { $0.pid } }

    func start() {
        let (first, stoppedEarly) = state.withLock { state -> (Bool, Bool) in
            defer { state.started = true }
            return (!state.started, state.stopping)
        }
        guard first else { return }
        if stoppedEarly {
            finish(.userExited, nil)
            return
        }
        let channel: WorkerChannel
        do {
            let worker = try SpareWorker.shared.take(display: state.withLock { $0.startMessage.window != nil })
            channel = WorkerChannel(
                fd: worker.channel, incoming: WorkerMessage.maximumFromWorker, decode: WorkerMessage.fromWorker)
            channel.setSendTimeout(seconds: 5)
            var start = state.withLock { $0.startMessage }
            let proxy: CheckedProxy?
            do {
                proxy = try worker.network(for: &start, access: urlAccess)
            } catch {
                // Not started: the worker ends with its channel, and is reaped here.
                channel.shutdown()
                _ = WorkerProcess.reap(worker.pid, grace: .zero)
                throw error
            }
            let controls = state.withLock { state -> [PlaybackControl.Action] in
                state.channel = channel
                state.pid = worker.pid
                state.proxy = proxy
                defer { state.pending.removeAll() }
                return state.pending
            }
            try? channel.send(.start(start))
            for action in controls { try? channel.send(.control(PlaybackControl(action))) }
        } catch {
            let message = "\(error)"
            onEvent(.errorLog(ErrorLogEntry(date: Date().timeIntervalSince1970, domain: "decoder", comment: message)))
            finish(.playbackError, message)
            return
        }
        spawnThread("castd.decoder.reader") { self.runReader(channel) }
        if source != nil {
            let live = state.withLock { $0.startMessage.mirror == true }
            spawnThread("castd.decoder.server") { live ? self.runPush(channel) : self.runServer(channel) }
        }
    }

    /// Sends `action` to the worker. The level and mute asked for before it starts go in its start message; `stop`
    /// also unblocks a media read in progress and kills a worker that does not finish in time; `accessLog` is
    /// answered by the worker with an event.
    func perform(_ action: PlaybackControl.Action) {
        switch action {
        case .volume(let volume):
            let before = state.withLock { state -> Bool in
                state.startMessage.volume = volume
                return !state.started
            }
            if !before { send(action) }
        case .mute(let muted):
            let before = state.withLock { state -> Bool in
                state.startMessage.muted = muted
                return !state.started
            }
            if !before { send(action) }
        case .stop: stop()
        case .pause, .resume, .resumeAt, .align, .anchor, .seek, .rate, .accessLog, .scaling, .subtitles, .audio:
            send(action)
        case .join, .skip, .move: break  // the session passes it on to its sender; the worker has no group or queue
        }
    }

    /// Asks the worker to stop (it finishes with `userExited`) and unblocks a media read in progress; a worker that
    /// has not finished after `stopGrace` is killed.
    private func stop() {
        let (wasStarted, first) = state.withLock { state -> (Bool, Bool) in
            defer { state.stopping = true }
            return (state.started, !state.stopping)
        }
        guard first else { return }
        guard wasStarted else { return }  // start() finishes at once.
        send(.stop)
        source?.cancel()
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.stopGrace.timeInterval) { [self] in
            // The reader sees the channel end, and kills and reaps the worker.
            state.withLock { $0.closed ? nil : $0.channel }?.shutdown()
        }
    }

    private func send(_ action: PlaybackControl.Action) {
        let channel = state.withLock { state -> WorkerChannel? in
            if !state.started {
                state.pending.append(action)
                return nil
            }
            return state.closed ? nil : state.channel
        }
        guard let channel else { return }
        do {
            try channel.send(.control(PlaybackControl(action)))
        } catch {
            // A worker that stopped reading is treated as dead: the reader reaps it.
            channel.shutdown()
        }
    }

    // MARK: Threads

    private func runReader(_ channel: WorkerChannel) {
        var violation: String?
        var finished = false
        var videoActive = false
        var steppedAside = false
        let (workerPID, cpuBudget) = state.withLock { ($0.pid, $0.startMessage.limits.cpuWithoutProgress) }
        var budget = workerPID.map { CPUBudget(pid: $0, seconds: cpuBudget) }
        var dropped = 0
        while !finished, violation == nil, let message = channel.next(violation: &violation) {
            switch message {
            case .read(let read):
                let accepted = state.withLock { state -> Bool in
                    guard state.reads.count < Self.maximumWaitingReads else { return false }
                    state.reads.append(read)
                    return true
                }
                if !accepted { violation = "more than \(Self.maximumWaitingReads) reads at once" }
                if let workerPID { SpareWorker.shared.noteRead(by: workerPID) }
            case .event(let event):
                budget?.note(event)
                // The engine started its clock (first picture or sound): the next spare may start once the
                // read-ahead burst is over (`SpareRefillRule`).
                if case .playbackState(let state) = event, state == .playing || state == .paused, let workerPID {
                    SpareWorker.shared.noteShown(by: workerPID)
                }
                if case .videoActive(let active) = event {
                    videoActive = active
                    // The worker's window shows its first picture: castd's idle screen makes way.
                    if active, !steppedAside, let idleWindow {
                        steppedAside = true
                        idleWindow.stepAside()
                    }
                }
                if case .finished = event {
                    finished = true
                    // Nothing more is read: a media read still waiting for the sender must not hold up the
                    // session's end (closing the connection waits for it), as the engine in castd cancels its
                    // source before it finishes.
                    source?.cancel()
                }
                onEvent(event)
            case .unacceptableEvent(let reason):
                // A value castd cannot take is not a reason to stop playback: dropped, and said (the first few, then
                // every hundredth, so that a worker repeating it cannot fill the log).
                dropped += 1
                if dropped <= 3 || dropped % 100 == 0 {
                    logger.warning("dropped an event of the decoder process (\(dropped) so far): \(reason)")
                }
            case .confine, .confined, .start, .control, .data, .readFailed, .thumbnailRequest, .thumbnailCancel,
                .thumbnail:
                preconditionFailure("WorkerMessage.fromWorker lets only read and event through")
            }
        }
        let (pid, proxy) = state.withLock { state -> (pid_t?, CheckedProxy?) in
            state.closed = true
            return (state.pid, state.proxy)
        }
        proxy?.stop()
        if let pid { SpareWorker.shared.noteEnded(by: pid) }
        // A worker that broke the rules is not waited for; one that finished has a moment to exit by itself.
        if violation != nil, let pid { kill(pid, SIGKILL) }
        channel.shutdown()
        source?.cancel()
        guard let pid else { return }
        let end = WorkerProcess.reap(pid, grace: finished ? .seconds(2) : .milliseconds(300))
        // The worker is gone, and its window with its display connection: the idle screen comes back.
        if steppedAside { idleWindow?.comeBack() }
        guard !finished else { return }
        let overBudget =
            end.signal == SIGXCPU
            ? " (it used \(cpuBudget) s of CPU while playback did not move on: a damaged or hostile file?)" : ""
        let message =
            violation.map { "the decoder process broke the channel's rules and was stopped: \($0)" }
            ?? "the decoder process died: it \(end.text)\(overBudget)"
        onEvent(.errorLog(ErrorLogEntry(date: Date().timeIntervalSince1970, domain: "decoder", comment: message)))
        if videoActive { onEvent(.videoActive(false)) }
        finish(.playbackError, message)
    }

    /// Serves the worker's reads from the sender's media, one at a time, in order.
    private func runServer(_ channel: WorkerChannel) {
        guard let source else { return }
        let subtitles = state.withLock { $0.startMessage.subtitles }.flatMap { source.subtitles($0) }
        var server = MediaReadServer(source: source, position: 0, subtitles: subtitles)
        while true {
            let next = state.withLock(when: { !$0.reads.isEmpty || $0.closed }) { state -> MediaRead? in
                state.closed ? nil : state.reads.removeFirst()
            }
            guard let read = next else { return }
            do { try server.answer(read, on: channel) } catch { return }
        }
    }

    /// Pushes a mirror session's live stream to the worker as it arrives (`MediaReadServer.push`). A worker that takes
    /// no piece within the channel's send timeout is treated as dead: the reader reaps it.
    private func runPush(_ channel: WorkerChannel) {
        guard let source else { return }
        do { try MediaReadServer.push(source, on: channel) } catch { channel.shutdown() }
    }

    /// The closing pair of a session whose worker cannot say it.
    private func finish(_ reason: FinishReason, _ error: String?) {
        onEvent(.playbackState(.stopped))
        onEvent(.finished(reason: reason, error: error))
    }

    private func spawnThread(_ name: String, _ body: @escaping @Sendable () -> Void) {
        startDetachedThread(name: name, stackSize: 1 << 20, body)
    }
}
