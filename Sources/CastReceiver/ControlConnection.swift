import CastBase
import CastProtocol
import CastSecurity
import CastSystem
import Foundation

/// One sender's control connection: TLS, then frames through the state machine, until either side closes.
///
/// Runs on its own thread and is not shared: no synchronisation needed inside.
final class ControlConnection {
    let fd: Int32
    let peer: String
    /// Its place in the receiver's `ConnectionAdmission`.
    let ticket: ConnectionAdmission.Ticket
    let receiver: Receiver
    let logger: Logger
    private var wasAdmitted = false

    init(fd: Int32, peer: String, ticket: ConnectionAdmission.Ticket, receiver: Receiver, logger: Logger) {
        self.fd = fd
        self.peer = peer
        self.ticket = ticket
        self.receiver = receiver
        self.logger = logger
    }

    /// Takes the connection out of the strangers' pool; false (logged) when it must close instead.
    private func markAdmitted() -> Bool {
        guard !wasAdmitted else { return true }
        guard receiver.connectionAdmitted(ticket) else {
            let limit = receiver.configuration.limits.maximumConnections
            logger.warning("connection from \(peer) closed: \(limit) connections already")
            return false
        }
        wasAdmitted = true
        return true
    }

    func run() {
        let limits = receiver.configuration.limits
        let tls: TLSConnection
        do {
            tls = try TLSConnection.accept(
                fd: fd, identity: receiver.identityForConnections, handshakeTimeout: limits.handshakeTimeout)
        } catch {
            logger.warning("connection from \(peer) closed: TLS handshake failed: \(error)")
            return
        }
        // A media connection hands its TLS to the session, which closes it when playback ends.
        var handedOver = false
        defer {
            if !handedOver {
                receiver.admitted.remove(tls)
                tls.close()
            }
        }
        let writer = MessageWriter(tls)
        // Watched for revocation before its key is checked, so that an unpairing at any moment after the check closes
        // it: one checked first and watched only at its hello (seconds later) would keep control if unpaired between.
        // A stranger is not watched (a store change would close it while it pairs) until it has paired.
        receiver.watchAdmitted(tls, sender: "(before its hello)", peer: peer)
        let peerIsPaired = receiver.pairing.isPaired(tls.peerPublicKey)
        if !peerIsPaired { receiver.admitted.remove(tls) }
        // A paired key has passed the only check there is: it leaves the strangers' pool now, before its hello, so
        // that strangers arriving after it cannot push it out.
        if peerIsPaired, receiver.configuration.auth != .none, !markAdmitted() { return }
        var machine = ReceiverConnectionStateMachine(
            welcome: Welcome(name: receiver.name, id: receiver.id, auth: receiver.configuration.auth.rawValue),
            auth: receiver.configuration.auth, peerIsPaired: peerIsPaired)
        var decoder = FrameDecoder()
        let clock = ContinuousClock()
        var helloDeadline = clock.now + limits.helloTimeout
        var frameDeadline: ContinuousClock.Instant?
        /// When the last bytes were read (CLOCK_MONOTONIC ns): the receive stamp of a time request in them.
        var readAt: Int64 = 0
        var timeRequests = RequestRateLimit.timeRequests
        /// The pairing attempt open on this connection, if any.
        var attempt: PairingAttempt?
        defer { if let attempt { receiver.pairing.abandon(attempt) } }

        func perform(_ action: ReceiverConnectionStateMachine.Action) throws -> Bool {
            switch action {
            case .send(let message):
                if case .welcome = message, let hello = machine.peer {
                    guard markAdmitted() else { return false }
                    receiver.watchAdmitted(tls, sender: hello.name, peer: peer)
                    // Checked again, now that it is watched, before it is welcomed: the key may have been unpaired
                    // since the check at its TLS handshake.
                    guard receiver.configuration.auth == .none || receiver.pairing.isPaired(tls.peerPublicKey) else {
                        logger.warning("sender \"\(hello.name)\" from \(peer) closed: it is no longer paired")
                        return false
                    }
                    try writer.send(message)
                    logger.info("sender \"\(hello.name)\" (\(hello.software)) connected from \(peer)")
                    return true
                }
                try writer.send(message)
                return true
            case .startPairing(let start):
                switch receiver.pairing.challenge(for: start, peerKey: tls.peerPublicKey) {
                case .proceed(let (challenge, opened)):
                    attempt = opened
                    helloDeadline = clock.now + limits.pairingTimeout
                    try writer.send(.pairing(.challenge(challenge)))
                    return true
                case .refuse(let failure):
                    logger.warning("pairing request from \(peer) refused: \(failure.message)")
                    try? writer.send(.pairing(.failure(failure)))
                    return false
                }
            case .finishPairing(let start, let proof):
                guard let open = attempt else { preconditionFailure("a proof without a challenge") }
                attempt = nil
                switch receiver.pairing.confirm(start, proof, attempt: open, tls: tls) {
                case .proceed(let confirmation):
                    try writer.send(.pairing(.confirmation(confirmation)))
                    machine.pairingSucceeded()
                    helloDeadline = clock.now + limits.helloTimeout
                    return true
                case .refuse(let failure):
                    try? writer.send(.pairing(.failure(failure)))
                    return false
                }
            case .sendStatus:
                try writer.send(.status(receiver.currentStatus()))
                return true
            case .play(let request):
                guard let token = receiver.startSession(request, senderName: machine.peer?.name ?? peer, writer: writer)
                else {
                    try writer.send(
                        .error(ErrorMessage(code: .busy, message: "\(receiver.name) is playing for another sender")))
                    return true
                }
                try writer.send(.playAccepted(PlayAccepted(session: token)))
                receiver.accepted(token: token)
                return true
            case .thumbnails(let request):
                receiver.thumbnails(request, writer: writer)
                return true
            case .cancelThumbnails:
                receiver.cancelThumbnails(writer: writer)
                return true
            case .timeReply(let request):
                guard timeRequests.admit(at: Double(readAt) / 1e9) else {
                    let refusal = ErrorMessage(code: .tooManyRequests, message: "more than 40 time requests a second")
                    try writer.send(.error(refusal))
                    return true
                }
                try writer.sendTimeReply(to: request, received: readAt)
                return true
            case .watch:
                receiver.watchers.add(writer)
                try writer.send(.status(receiver.currentStatus()))
                return true
            case .control(let action):
                if !receiver.control(action) {
                    try writer.send(.error(ErrorMessage(code: .notPlaying, message: "nothing plays on this receiver")))
                }
                return true
            case .attachMedia(let token):
                guard markAdmitted() else { return false }
                guard receiver.attachMedia(token: token, tls: tls, peer: peer) else {
                    logger.warning("media connection from \(peer) closed: no session \(token)")
                    try? writer.send(
                        .error(ErrorMessage(code: .unknownSession, message: "no playback session \(token)")))
                    return false
                }
                handedOver = true
                return false
            case .sendAndClose(let message, let reason):
                logger.warning("connection from \(peer) closed: \(reason)")
                try? writer.send(message)
                return false
            }
        }

        defer { if let hello = machine.peer { receiver.senderLost(writer, name: hello.name) } }
        do {
            while true {
                // Deadlines bound what a slow peer can hold: the hello, and each frame once started.
                let deadline: ContinuousClock.Instant? =
                    machine.phase != .established ? min(helloDeadline, frameDeadline ?? helloDeadline) : frameDeadline
                var timeout: Duration? = deadline.map { $0 - clock.now }
                if let t = timeout, t <= .zero { timeout = .zero }
                let bytes: [UInt8]
                do {
                    if timeout == .zero { throw ReadTimedOut() }
                    bytes = try tls.read(maxCount: 16 * 1024, timeout: timeout)
                    readAt = MonotonicClock.nanoseconds()
                } catch let error as SecurityError where error.kind == .timedOut {
                    throw ReadTimedOut()
                }
                if bytes.isEmpty {
                    if let hello = machine.peer {
                        logger.info("sender \"\(hello.name)\" disconnected")
                    } else {
                        logger.warning("connection from \(peer) closed by the peer before hello")
                    }
                    return
                }
                decoder.feed(bytes)
                writer.heard()
                while true {
                    let frame: Frame?
                    do {
                        frame = try decoder.nextFrame()
                    } catch {
                        _ = try perform(machine.framingFailed(error))
                        return
                    }
                    guard let frame else { break }
                    guard try perform(machine.receive(frame)) else { return }
                }
                frameDeadline = decoder.hasPartialFrame ? (frameDeadline ?? clock.now + limits.frameTimeout) : nil
            }
        } catch is ReadTimedOut {
            let what: String
            switch machine.phase {
            case .established: what = "the sender stalled in the middle of a frame"
            case .pairing: what = "no pairing proof in time"
            default: what = "no hello in time"
            }
            _ = try? perform(machine.timedOut(what))
        } catch {
            logger.warning("connection from \(peer) lost: \(error)")
        }
    }

    private struct ReadTimedOut: Error {}
}
