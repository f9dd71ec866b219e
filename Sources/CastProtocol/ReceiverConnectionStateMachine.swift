/// How a receiver admits senders.
public enum AuthMode: String, Sendable, CaseIterable {
    /// Senders pair with the PIN the receiver shows (the default).
    case pin
    /// Senders pair with a fixed secret.
    case password
    /// Anyone on the network may control the receiver (explicit opt-in).
    case none
}

/// The receiver's side of one control connection: which messages are allowed when, and what to do
/// about each. No I/O: the connection feeds it decoded frames and the clock, and carries out the
/// actions it returns (after swift-nio-ssh's state machines).
public struct ReceiverConnectionStateMachine: Sendable {
    /// What the I/O layer must do.
    public enum Action: Sendable, Equatable {
        /// Send this message and keep reading.
        case send(Message)
        /// Send the receiver's current status (only the I/O layer knows it) and keep reading.
        case sendStatus
        /// Start playing for this sender (replacing whatever plays); answer with `playAccepted` or an error.
        case play(PlayRequest)
        /// Apply a control to the session this sender started.
        case control(PlaybackControl.Action)
        /// This is a media connection for `session`: hand the connection to that session's source;
        /// from here on the session reads it, not this machine.
        case attachMedia(session: String)
        /// Send this message, then close the connection; `reason` goes to the log.
        case sendAndClose(Message, reason: String)
    }

    private enum State: Sendable {
        /// Connected; nothing but `hello` is acceptable.
        case awaitingHello
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

    /// Creates the machine for a receiver described by `welcome` that admits senders by `auth`.
    public init(welcome: Welcome, auth: AuthMode) {
        self.welcome = welcome
        self.auth = auth
    }

    /// The sender's hello, once accepted.
    public var peer: Hello? {
        if case .established(let hello) = state { return hello }
        return nil
    }

    /// Whether hello has been accepted.
    public var isEstablished: Bool { peer != nil }

    /// Handles one frame from the sender.
    public mutating func receive(_ frame: Frame) -> Action {
        if case .media = state { preconditionFailure("a media connection's frames go to its session") }
        guard case .closed = state else {
            do {
                return try handle(Message(frame))
            } catch {
                return fail(error)
            }
        }
        preconditionFailure("frame received after the connection was closed")
    }

    /// The frame decoder refused the stream (oversized or empty frame).
    public mutating func framingFailed(_ error: ProtocolError) -> Action { fail(error) }

    /// The peer stalled: no hello in time, or stopped mid-frame.
    public mutating func timedOut(_ what: String) -> Action {
        fail(ProtocolError(.timeout, what))
    }

    private mutating func handle(_ message: Message) throws(ProtocolError) -> Action {
        switch (state, message) {
        case (.awaitingHello, .hello(let hello)):
            guard hello.version == protocolVersion else {
                throw ProtocolError(
                    .unsupportedVersion, "protocol version \(hello.version) is not supported (this receiver speaks \(protocolVersion))")
            }
            switch auth {
            case .none:
                state = .established(hello)
                return .send(.welcome(welcome))
            case .pin, .password:
                // Pairing is not built yet: no mode but `none` may admit an unknown sender.
                throw ProtocolError(.pairingRequired, "this receiver requires pairing (auth \(auth.rawValue))")
            }
        case (.awaitingHello, .mediaHello(let hello)):
            guard hello.version == protocolVersion else {
                throw ProtocolError(
                    .unsupportedVersion, "protocol version \(hello.version) is not supported (this receiver speaks \(protocolVersion))")
            }
            guard auth == .none else {
                throw ProtocolError(.pairingRequired, "this receiver requires pairing (auth \(auth.rawValue))")
            }
            state = .media
            return .attachMedia(session: hello.session)
        case (.awaitingHello, let other):
            throw ProtocolError(.unexpectedMessage, "\(other.type) before hello")
        case (.established, .statusRequest):
            return .sendStatus
        case (.established, .play(let request)):
            return .play(request)
        case (.established, .control(let control)):
            return .control(control.action)
        case (.established, .error):
            // A sender's error is information for the log; there is nothing to answer.
            throw ProtocolError(.unexpectedMessage, "the sender reported an error")
        case (.established, let other):
            throw ProtocolError(.unexpectedMessage, "\(other.type) is not accepted from a sender")
        case (.closed, _), (.media, _):
            preconditionFailure("handled above")
        }
    }

    private mutating func fail(_ error: ProtocolError) -> Action {
        state = .closed
        return .sendAndClose(.error(ErrorMessage(error)), reason: error.description)
    }
}
