import CastBase
import CastMedia
import CastProtocol
import CastSender
import Foundation
import Synchronization

/// A movie playing on a route (a receiver, or for audio an AirPlay speaker): the session driven from a serial queue
/// (connecting blocks), its events read on a thread of their own.
///
/// Controls given before the receiver's engine reports its first playback state are held and sent after it: the
/// receiver ignores controls that reach a session whose engine has not started.
///
/// A file playing on a Cast receiver can play on into a group (`adopted(into:)`): the group playback asks for the
/// session (`handOver`), and the event reader gives it up at its next event, with what the events said so far; from
/// there the group reads its events, and this playback reports nothing more and leaves the session open.
///
/// Thread-safety: what changes is in `state`, a `Mutex` under which nothing else is called (the receiver is reached,
/// and reports are made, after it is released). Connecting and sending happen on `work` only, so controls reach the
/// receiver in the order they were given.
final class RemoteMoviePlayback: MoviePlayback, Sendable {
    let route: ReceiverDescription?
    private let receiver: ReceiverDescription
    private let path: String
    private let configuration: CastKitConfiguration
    private let startTime: Double
    /// Whether the receiver plays at once; false loads and waits paused at the first picture (`shouldAutoplay`).
    private let autoplay: Bool
    private let report: @Sendable (MoviePlaybackReport) -> Void
    private let work = DispatchQueue(label: "CastKit.RemoteMoviePlayback")
    private let state = Mutex(State())

    private struct State {
        var playback: (any SenderPlayback)?
        /// The key the receiver presented, once connected.
        var receiverID: String?
        var stopped = false
        /// The receiver's engine reported a playback state: controls go out at once.
        var ready = false
        var held: [PlaybackControl.Action] = []
        /// The session when it plays a file on a Cast receiver: what a group can take over.
        var adoptable: RemotePlayback?
        /// A group asked for the session (`handOver`): the event reader gives it up at its next event.
        var handOverAsked = false
        /// What the reader gave up (the session and what its events said so far), until `handOver` takes it.
        var given: (RemotePlayback, PlaybackSnapshot)?
    }

    /// Signalled when the reader gave the session up, or ended, while a hand-over was asked.
    private let handedOver = DispatchSemaphore(value: 0)

    init(
        path: String, receiver: ReceiverDescription, configuration: CastKitConfiguration, startTime: Double,
        autoplay: Bool = true, pinnedID: String? = nil, report: @escaping @Sendable (MoviePlaybackReport) -> Void
    ) {
        self.autoplay = autoplay
        self.route = receiver
        // A reconnection insists on the key the receiver it lost presented.
        var target = receiver
        if let pinnedID { target.id = pinnedID }
        self.receiver = target
        self.path = path
        self.configuration = configuration
        self.startTime = startTime
        self.report = report
    }

    func start() {
        work.async { [self] in
            guard !state.withLock({ $0.stopped }) else { return }
            let playback: any SenderPlayback
            do throws(CastError) {
                if receiver.kind == .speaker {
                    let speaker = try SpeakerPlayback.start(decodingInProcess: path, on: receiver)
                    if startTime > 0 { try speaker.control(.seek(position: startTime, exact: true)) }
                    playback = speaker
                } else if GroupMedia.isURL(path), let url = URL(string: path) {
                    // The receiver opens a URL itself, with the credentials stored for its server (if any), once its
                    // connection proved a key this sender pinned (`StoredCredentials.mayGo`).
                    let connection = try ReceiverConnection.open(
                        receiver, configDirectory: configuration.configDirectory, senderName: configuration.senderName)
                    let pinned =
                        connection.peerID.map {
                            Pairing.pairedIDs(configDirectory: configuration.configDirectory).contains($0)
                        } ?? false
                    let mayGo = StoredCredentials.mayGo(
                        toReceiver: pinned, for: url, overPlainHTTP: configuration.storedCredentialsOverPlainHTTP)
                    let stored = mayGo ? StoredCredentials.lookup(for: url) : nil
                    playback = try RemotePlayback.start(
                        url: path, username: stored?.user, password: stored?.password, over: connection,
                        startTime: startTime > 0 ? startTime : nil, autoplay: autoplay)
                } else {
                    let file = try MediaFile.open(path)
                    let remote = try RemotePlayback.start(
                        file, on: receiver, configDirectory: configuration.configDirectory,
                        senderName: configuration.senderName, startTime: startTime > 0 ? startTime : nil,
                        autoplay: autoplay)
                    state.withLock { $0.adoptable = remote }
                    playback = remote
                }
            } catch {
                report(.routeLost(error))
                return
            }
            let receiverID = (playback as? RemotePlayback)?.receiverID
            let kept = state.withLock { state in
                if !state.stopped {
                    state.playback = playback
                    state.receiverID = receiverID
                }
                return !state.stopped
            }
            guard kept else {
                try? playback.control(.stop)
                playback.close()
                return
            }
            startDetachedThread(name: "CastKit.events") { [self] in readEvents(from: playback) }
        }
    }

    /// Reports every event until the finish; a broken connection is reported unless we stopped.
    ///
    /// A receiver shutting down (its finish carries `receiverShutdown`) is reported as a broken connection too: the
    /// player retries it as it would a killed one. Its video stops just before that finish, so a `videoActive false`
    /// is held until the next event shows whether it ends an ordinary playback or comes from a shutdown (dropped: the
    /// video is expected back within the retry window, as after a kill).
    private func readEvents(from playback: any SenderPlayback) {
        var videoStopped = false
        var snapshot = PlaybackSnapshot()
        // However the reading ends, a hand-over asked meanwhile is not left waiting.
        defer { handedOver.signal() }
        while true {
            let event: PlaybackEvent
            do {
                event = try playback.nextEvent()
            } catch {
                let (stopped, receiverID) = state.withLock { ($0.stopped, $0.receiverID) }
                if !stopped { report(.connectionBroken(error, receiverID: receiverID)) }
                playback.close()
                return
            }
            _ = snapshot.apply(event)
            // The answer to the hand-over's nudge (`handOver`) is not the player's.
            if case .accessLog = event, giveUp(snapshot) { return }
            switch event {
            case .videoActive(false):
                videoStopped = true
                continue
            case .finished(_, let message, .receiverShutdown?):
                let (stopped, receiverID) = state.withLock { ($0.stopped, $0.receiverID) }
                if !stopped {
                    report(
                        .connectionBroken(
                            CastError(.connectionLost, message ?? "the receiver is shutting down"),
                            receiverID: receiverID))
                }
                playback.close()
                return
            case .playbackState(.stopped), .errorLog, .accessLog:
                // The rest of an ending: whether the video stop is reported waits for the finish.
                break
            default:
                if videoStopped {
                    videoStopped = false
                    report(.event(.videoActive(false)))
                }
            }
            if case .playbackState = event { releaseHeldControls() }
            report(.event(event))
            if case .finished = event {
                playback.close()
                return
            }
            if giveUp(snapshot) { return }
        }
    }

    /// Gives the session up to the group that asked for it (`handOver`), if one did: from here this playback reports
    /// nothing, sends nothing and closes nothing.
    private func giveUp(_ snapshot: PlaybackSnapshot) -> Bool {
        state.withLock { state in
            guard state.handOverAsked, !state.stopped, let remote = state.adoptable else { return false }
            state.given = (remote, snapshot)
            state.adoptable = nil
            state.stopped = true
            state.playback = nil
            return true
        }
    }

    /// A group playback of `receivers` that takes this one's session over, when it plays a file on a Cast receiver
    /// (a URL the receiver opens itself is moved: the group's adoption takes files, as `cast`'s does).
    func adopted(
        into receivers: [ReceiverDescription], playing: Bool, report: @escaping @Sendable (MoviePlaybackReport) -> Void
    ) -> (any MoviePlayback)? {
        guard receiver.kind == .cast, !GroupMedia.isURL(path) else { return nil }
        return GroupMoviePlayback(
            path: path, receivers: receivers, configuration: configuration, adopting: self, playing: playing,
            report: report)
    }

    /// The session and what its events said so far, given up by the event reader at its next event (the receiver is
    /// asked for its access log so that one comes at once); nil when there is none to give (it did not start, it
    /// ended, it plays no file) or none came within `timeout`. Blocks: called once, on the group's queue.
    func handOver(within timeout: DispatchTimeInterval = .seconds(3)) -> (RemotePlayback, PlaybackSnapshot)? {
        // After the start (on `work`): the session exists and its reader runs, or it never will.
        let asked = work.sync {
            let remote = state.withLock { state -> RemotePlayback? in
                guard !state.stopped, !state.handOverAsked, let remote = state.adoptable else { return nil }
                state.handOverAsked = true
                return remote
            }
            try? remote?.control(.accessLog)
            return remote != nil
        }
        guard asked else { return nil }
        _ = handedOver.wait(timeout: .now() + timeout)
        return state.withLock { state in
            // Not given in time: the reader keeps it and reports on (the group stops it for the player's move).
            state.handOverAsked = false
            defer { state.given = nil }
            return state.given
        }
    }

    private func releaseHeldControls() {
        let held = state.withLock { state -> [PlaybackControl.Action] in
            guard !state.ready else { return [] }
            state.ready = true
            defer { state.held = [] }
            return state.held
        }
        for action in held { send(action) }
    }

    private func control(_ action: PlaybackControl.Action) {
        let now = state.withLock { state in
            if !state.ready { state.held.append(action) }
            return state.ready
        }
        if now { send(action) }
    }

    /// Sends on `work`; a failure shows up as the event thread's broken connection.
    private func send(_ action: PlaybackControl.Action) {
        work.async { [self] in
            guard let playback = state.withLock({ $0.stopped ? nil : $0.playback }) else { return }
            try? playback.control(action)
        }
    }

    /// Controls wait until the receiver accepted the movie (`releaseHeldControls`); a receiver fits pictures by its
    /// own setting, so `scaling` is not sent.
    func perform(_ action: PlaybackControl.Action) {
        switch action {
        case .stop: stop()
        case .scaling: break
        case .join, .skip, .move, .anchor: break  // a movie plays on one receiver, alone
        case .pause, .resume, .resumeAt, .align, .seek, .rate, .volume, .mute, .accessLog, .subtitles, .audio:
            control(action)
        }
    }

    private func stop() {
        state.withLock { $0.stopped = true }
        work.async { [self] in
            guard let playback = state.withLock({ $0.playback }) else { return }
            try? playback.control(.stop)
            playback.close()
        }
    }
}
