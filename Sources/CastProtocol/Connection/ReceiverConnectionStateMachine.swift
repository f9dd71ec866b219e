/// How a receiver admits senders.
public enum AuthMode: String, Sendable, CaseIterable {
    /// Senders pair with the PIN the receiver shows (the default).
    case pin
    /// Senders pair with a fixed secret.
    case password
    /// Anyone on the network may control the receiver (explicit opt-in).
    case none
}

/// The receiver's side of one connection: which messages are allowed when, and what to do about
/// each. No I/O: the connection feeds it frames and carries out the actions it returns (after
/// swift-nio-ssh's state machines). Before a sender is admitted, only `hello`, `mediaHello` and
/// pairing messages are even decoded: every other type is refused from its type byte alone.
public struct ReceiverConnectionStateMachine: Sendable {
    /// What the I/O layer must do.
    public enum Action: Sendable, Equatable {
        /// Send this message and keep reading.
        case send(Message)
        /// Send the receiver's current status (only the I/O layer knows it) and keep reading.
        case sendStatus
        /// Start playing for this sender (replacing whatever plays); answer with `playAccepted` or an error.
        case play(PlayRequest)
        /// Apply a control to the session that plays.
        case control(PlaybackControl.Action)
        /// Push this sender the events of whatever plays, until it goes.
        case watch
        /// Answer each time of this request with images of the media that plays (or errors), on this connection.
        case thumbnails(ThumbnailRequest)
        /// Cancel this connection's thumbnail requests not answered yet.
        case cancelThumbnails
        /// Answer with a `timeReply` stamped when the request's frame was read and just before the reply is written
        /// (within the connection's rate limit for time requests, else `error {code: tooManyRequests}`).
        case timeReply(TimeRequest)
        /// This is a media connection for `session`: hand the connection to that session's source;
        /// from here on the session reads it, not this machine.
        case attachMedia(session: String)
        /// A sender asks to pair: check the rate limit, make the secret, answer with a challenge (or a
        /// failure and close). The machine now expects the proof.
        case startPairing(PairingStart)
        /// The sender's proof arrived: verify it, store the sender, answer with the confirmation and
        /// call `pairingSucceeded()`; or answer with a failure and close.
        case finishPairing(PairingStart, PairingProof)
        /// Send this message, then close the connection; `reason` goes to the log.
        case sendAndClose(Message, reason: String)
    }

    /// Where a connection is, as far as its deadlines go.
    public enum Phase: Sendable, Equatable {
        /// Before admission: a hello (or pairing start) must come soon.
        case awaitingHello
        /// Pairing: a person is reading a PIN off a screen; the proof may take a while.
        case pairing
        /// Admitted (or a media connection); idle is fine.
        case established
        /// Done.
        case closed
    }

    private enum State: Sendable {
        /// Connected; only `hello`, `mediaHello` or `pairingStart`.
        case awaitingHello
        /// Pairing started; only `pairingProof`.
        case awaitingProof(PairingStart)
        /// The proof is being verified by the I/O layer.
        case verifyingProof
        /// Hello accepted; the sender may send requests.
        case established(Hello)
        /// A media connection; its frames belong to the session's source.
        case media
        /// An error was sent; nothing more is processed.
        case closed
    }

    private var state: State = .awaitingHello
    private let welcome: Welcome
    private let auth: AuthMode
    private var peerIsPaired: Bool

    /// Creates the machine for a receiver described by `welcome` that admits senders by `auth`;
    /// `peerIsPaired` says whether the key in the peer's TLS certificate is in the pairing store.
    public init(welcome: Welcome, auth: AuthMode, peerIsPaired: Bool = false) {
        self.welcome = welcome
        self.auth = auth
        self.peerIsPaired = peerIsPaired
    }

    /// The sender's hello, once accepted.
    public var peer: Hello? {
        if case .established(let hello) = state { return hello }
        return nil
    }

    /// Whether hello has been accepted.
    public var isEstablished: Bool { peer != nil }

    /// The phase, for the I/O layer's deadlines.
    public var phase: Phase {
        switch state {
        case .awaitingHello: .awaitingHello
        case .awaitingProof, .verifyingProof: .pairing
        case .established, .media: .established
        case .closed: .closed
        }
    }

    /// Whether this connection may control playback: auth `none`, or a paired peer.
    private var admitted: Bool { auth == .none || peerIsPaired }

    /// Handles one frame from the sender.
    public mutating func receive(_ frame: Frame) -> Action {
        switch state {
        case .media: preconditionFailure("a media connection's frames go to its session")
        case .closed: preconditionFailure("frame received after the connection was closed")
        case .verifyingProof: preconditionFailure("frame received while the I/O layer verifies a proof")
        case .awaitingHello, .awaitingProof, .established: break
        }
        do {
            try admitType(frame.type)
            return try handle(Message(frame))
        } catch {
            return fail(error)
        }
    }

    /// The I/O layer verified the proof and stored the sender: it is paired and may now say hello.
    public mutating func pairingSucceeded() {
        guard case .verifyingProof = state else { preconditionFailure("pairing succeeded without a proof") }
        peerIsPaired = true
        state = .awaitingHello
    }

    /// The frame decoder refused the stream (oversized or empty frame).
    public mutating func framingFailed(_ error: ProtocolError) -> Action { fail(error) }

    /// The peer stalled: no hello in time, no proof in time, or stopped mid-frame.
    public mutating func timedOut(_ what: String) -> Action {
        fail(ProtocolError(.timeout, what))
    }

    /// Refuses, from the type byte alone, what the current state cannot accept: a peer that is not
    /// admitted gets no JSON parsed but the handful of messages that admission needs.
    private func admitType(_ type: UInt8) throws(ProtocolError) {
        let allowed: Set<MessageType>
        switch state {
        case .awaitingHello: allowed = [.hello, .mediaHello, .pairingStart]
        case .awaitingProof: allowed = [.pairingProof]
        default: return
        }
        guard let known = MessageType(rawValue: type) else {
            throw ProtocolError(.unknownMessageType, "unknown message type \(type)")
        }
        guard allowed.contains(known) else {
            throw ProtocolError(
                .unexpectedMessage, "\(known) before \(allowed.map { "\($0)" }.sorted().joined(separator: " or "))")
        }
    }

    private mutating func handle(_ message: Message) throws(ProtocolError) -> Action {
        switch (state, message) {
        case (.awaitingHello, .hello(let hello)):
            try checkVersion(hello.version)
            guard admitted else {
                throw ProtocolError(
                    .pairingRequired, "this receiver requires pairing (auth \(auth.rawValue)): run cast pair")
            }
            state = .established(hello)
            return .send(.welcome(welcome))
        case (.awaitingHello, .mediaHello(let hello)):
            try checkVersion(hello.version)
            guard admitted else {
                throw ProtocolError(
                    .pairingRequired, "this receiver requires pairing (auth \(auth.rawValue)): run cast pair")
            }
            state = .media
            return .attachMedia(session: hello.session)
        case (.awaitingHello, .pairing(.start(let start))):
            guard auth != .none else {
                state = .closed
                let failure = PairingFailure(
                    reason: .notAccepted, message: "this receiver admits everyone (auth none): no pairing needed")
                return .sendAndClose(.pairing(.failure(failure)), reason: "pairing refused: auth none")
            }
            state = .awaitingProof(start)
            return .startPairing(start)
        case (.awaitingProof(let start), .pairing(.proof(let proof))):
            state = .verifyingProof
            return .finishPairing(start, proof)
        case (.established, .statusRequest):
            return .sendStatus
        case (.established, .play(let request)):
            return .play(request)
        case (.established, .control(let control)):
            return .control(control.action)
        case (.established, .watch):
            return .watch
        case (.established, .thumbnailRequest(let request)):
            return .thumbnails(request)
        case (.established, .thumbnailCancel):
            return .cancelThumbnails
        case (.established, .timeRequest(let request)):
            return .timeReply(request)
        case (.established, .error):
            throw ProtocolError(.unexpectedMessage, "the sender reported an error")
        case (.established, let other):
            throw ProtocolError(.unexpectedMessage, "\(other.type) is not accepted from a sender")
        case (.awaitingHello, let other), (.awaitingProof, let other):
            // admitType lets only the types above through; their other shapes land here.
            throw ProtocolError(.unexpectedMessage, "\(other.type) is not accepted here")
        case (.media, _), (.closed, _), (.verifyingProof, _):
            preconditionFailure("handled in receive")
        }
    }

    private func checkVersion(_ version: Int) throws(ProtocolError) {
        guard version == protocolVersion else {
            throw ProtocolError(
                .unsupportedVersion,
                "protocol version \(version) is not supported (this receiver speaks \(protocolVersion))")
        }
    }

    private mutating func fail(_ error: ProtocolError) -> Action {
        state = .closed
        return .sendAndClose(.error(ErrorMessage(error)), reason: error.description)
    }
}
