import CastBase
import CastMedia
import CastProtocol
import CastSecurity
import Foundation

/// The session that plays: starting one under the take-over policy, its media connection, the controls, the
/// deadlines of `SessionRules`, and its end when its sender is lost.
///
/// Thread-safety: the session and its rules, and the output settings, are in `state` (the receiver's `Mutex`); each
/// method takes what it needs under the lock and calls the session (which has its own) outside it.
extension Receiver {
    /// Starts a session for a Cast sender's play request (see `beginSession`). Returns the token its media
    /// connection must present; nil when the take-over policy is `deny` and another sender's session runs.
    func startSession(_ request: PlayRequest, senderName: String, writer: MessageWriter) -> String? {
        beginSession(request, senderName: senderName, owner: .castSender(writer))?.token
    }

    /// Starts a session for `owner`, replacing the one that plays (whose owner sees `interrupted`, then the
    /// finish). Nil when the take-over policy is `deny` and a session of another owner runs. The policy is the
    /// same whoever asks: a Cast sender or an AirPlay client. A `picture` (an AirPlay photo) is the session's media,
    /// held here: no media connection is awaited.
    func beginSession(
        _ request: PlayRequest, senderName: String, owner: SessionOwner, startFraction: Double? = nil,
        airPlaySessionID: String? = nil, urlAccess: URLAccess = .paired, picture: MemorySource? = nil
    ) -> PlaybackSession? {
        let logger = self.logger
        let events = configuration.events
        var engine = configuration.engine
        let (scaling, idleWindow) = state.withLock { ($0.output.scaling, $0.window) }
        engine.scalingMode = scaling
        let session = PlaybackSession(
            request: request, senderName: senderName, owner: owner, engine: engine,
            isolation: configuration.decoderIsolation, idleWindow: idleWindow, startFraction: startFraction,
            airPlaySessionID: airPlaySessionID, urlAccess: urlAccess, picture: picture,
            onEvent: { [weak self] session, event in
                events?.write(event)
                self?.watchers.tell(.event(event), except: session)
                if let id = session.airPlaySessionID {
                    self?.airPlayEvents.publish(
                        event, sessionID: id, category: session.picture == nil ? .video : .photo)
                }
                if case .finished(let reason, let error, _) = event {
                    self?.state.withLock { $0.rules.finished(session.token) }
                    logger.info(
                        "\"\(session.request.title)\" from \(session.senderName) finished: \(reason.rawValue)\(error.map { " (\($0))" } ?? "")"
                    )
                }
            },
            onEnd: { [weak self] session in
                self?.state.withLock { state in
                    state.rules.finished(session.token)
                    if state.session === session { state.session = nil }
                }
            })
        let now = clockNow()
        let (previous, decision) = state.withLock { state -> (PlaybackSession?, Rules.Decision) in
            let decision = state.rules.request(
                session.token, by: owner.identity(airPlaySessionID: airPlaySessionID),
                needsMedia: request.url == nil && picture == nil,
                watchesSender: owner.writer != nil, now: now)
            let previous = state.session
            if case .start = decision { state.session = session }
            return (previous, decision)
        }
        switch decision {
        case .refuse:
            logger.info(
                "\(senderName) asked to play; refused: busy with \(previous?.senderName ?? "another sender") (takeover deny)"
            )
            return nil
        case .start(let interrupted):
            if let previous, previous.token == interrupted {
                logger.info("\(senderName) takes over from \(previous.senderName)")
                previous.interrupt(by: senderName)
            }
        }
        logger.info(
            request.mirror == true ? "mirroring from \(senderName)" : "\(senderName) plays \"\(request.title)\"")
        let output = state.withLock { $0.output }
        session.apply(volume: output.level, muted: output.muted, announce: false)
        // The media connection's deadline; a Cast sender's silence (an AirPlay client's session ends with its
        // connection).
        watch(session, writer: owner.writer)
        // Watchers (`cast watch`) hear what plays now, and where it is in its queue, before its events.
        watchers.tell(.status(currentStatus()), except: session)
        return session
    }

    /// The session that owns the screen and the speakers now, if any.
    var currentSession: PlaybackSession? { state.withLock { $0.session } }

    /// The sender was sent `playAccepted` for `token`: a URL session starts its engine now, so that no event can
    /// reach the sender before the acceptance.
    func accepted(token: String) {
        guard let session = currentSession, session.token == token, session.request.url != nil else { return }
        session.startURL()
    }

    /// Hands a media connection to the session whose token it presented; false when there is none.
    func attachMedia(token: String, tls: TLSConnection, peer: String? = nil) -> Bool {
        let session = state.withLock { state -> PlaybackSession? in
            guard let session = state.session, session.token == token else { return nil }
            state.rules.mediaArrived(token)
            return session
        }
        guard let session else { return false }
        watchAdmitted(tls, sender: session.senderName, peer: peer ?? "?")
        session.attach(tls, peer: peer)
        return true
    }

    /// A control from a sender acts on the session that plays now, whoever started it; the volume, mute and scaling
    /// are the receiver's (`OutputSettings`). False when it is the session's and none plays.
    func control(_ action: PlaybackControl.Action) -> Bool {
        let (effect, session) = state.withLock { ($0.output.take(action), $0.session) }
        switch effect {
        case .volume(let level, let muted):
            session?.apply(volume: level, muted: muted, announce: true)
        case .scaling(let mode):
            setScalingMode(mode)
        case .session:
            guard let session else { return false }
            if case .resumeAt(let instant) = action {
                let ahead = Double(instant - MonotonicClock.nanoseconds()) / 1e6
                logger.info(
                    "resume scheduled at \(instant) (CLOCK_MONOTONIC ns, \(String(format: "%.1f", ahead)) ms ahead)")
            }
            session.control(action)
        }
        return true
    }

    /// A sender's control connection ended: it is no longer a watcher, and its session, if still
    /// playing, stops.
    func senderLost(_ writer: MessageWriter, name: String) {
        watchers.remove(writer)
        // A session that finished is not playing, though the receiver may not have let go of it yet: its sender
        // hears the finish (and may hang up) just before the session ends here.
        guard let session = currentSession, session.belongs(to: writer), !session.isFinished else { return }
        logger.warning("lost the sender \(name) while playing; stopping")
        session.end(with: .finished(reason: .playbackError, error: "the sender was lost"))
    }

    /// Carries out the session rules for `session` until it ends: asks them when they say, and ends the session with
    /// their reason (a media connection that did not arrive in time, a sender silent for too long).
    private func watch(_ session: PlaybackSession, writer: MessageWriter?) {
        let now = clockNow()
        let (verdict, next) = state.withLock { state in
            state.rules.current?.token == session.token
                ? (state.rules.check(now: now, senderSilence: writer?.silence), state.rules.nextCheck(now: now))
                : (nil, nil)
        }
        if let verdict {
            if case .senderLost(let limit) = verdict.ending {
                logger.warning("the sender \(session.senderName) has been silent for \(limit); stopping")
            }
            session.end(with: .finished(reason: .playbackError, error: verdict.ending.message))
            return
        }
        guard let next else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + (next - now).timeInterval) { [weak self, weak session] in
            guard let self, let session, !session.isFinished else { return }
            watch(session, writer: writer)
        }
    }
}
