import CastBase
public import CastProtocol
import CastSecurity
import CastSystem
import FoundationEssentials
import Synchronization

/// A sender's control connection to one receiver: TLS 1.3, hello, then requests.
///
/// Thread-safety: one thread reads (`receive`, or a request that waits for its reply); `send` and
/// `close()` may be called from any thread (sends are serialised by a lock).
public final class ReceiverConnection: Sendable {
    /// What the receiver said about itself when it accepted us.
    public let welcome: Welcome
    /// The TLS protocol version in use ("TLSv1.3").
    public let tlsVersion: String
    /// The receiver's id as computed from its TLS key (the id the sender will pin).
    public let peerID: String?
    private let tls: TLSConnection
    private let reader: FrameReader
    private let writeLock = Mutex(())
    /// The sender's side of the protocol: what may arrive when, and the deadlines. Sends record themselves in it under
    /// the write lock; the reader hands it each message.
    private let rules: Mutex<SenderConnectionStateMachine>

    private let description: ReceiverDescription

    private init(
        welcome: Welcome, tls: TLSConnection, reader: FrameReader, receiver: ReceiverDescription,
        rules: SenderConnectionStateMachine
    ) {
        self.description = receiver
        self.welcome = welcome
        self.tls = tls
        self.reader = reader
        self.rules = Mutex(rules)
        self.tlsVersion = tls.protocolVersion
        self.peerID = tls.peerPublicKey.map { fingerprint(ofPublicKey: $0) }
    }

    /// The machine's clock: CLOCK_MONOTONIC, for deadlines.
    static func now() -> Duration { .nanoseconds(MonotonicClock.nanoseconds()) }

    /// How long a reply may take before the receiver counts as lost.
    public static let replyTimeout: Duration = .seconds(5)

    /// Connects, completes TLS and the hello exchange.
    /// - Parameters:
    ///   - receiver: where to connect.
    ///   - configDirectory: the sender's directory holding its identity (created on first use).
    ///   - senderName: shown in the receiver's log.
    /// - Throws: `CastError`: `.connectionLost` when unreachable, `.notAuthorised` when the receiver requires pairing.
    public static func open(
        _ receiver: ReceiverDescription, configDirectory: String, senderName: String,
        timeout: Duration = .seconds(5)
    ) throws(CastError) -> ReceiverConnection {
        let (tls, peerID) = try connectChecked(receiver, configDirectory: configDirectory, timeout: timeout)
        return try greet(
            receiver, over: tls, peerID: peerID, configDirectory: configDirectory, senderName: senderName,
            timeout: timeout)
    }

    /// TCP, TLS, and the key check (`checkPinnedIdentity`): a connection on which nothing has been sent yet.
    static func connectChecked(_ receiver: ReceiverDescription, configDirectory: String, timeout: Duration)
        throws(CastError) -> (TLSConnection, peerID: String)
    {
        let tls = try connectTLS(to: receiver, configDirectory: configDirectory, timeout: timeout)
        // The key is checked before anything is sent: an impostor learns nothing, not even the hello.
        do {
            return (
                tls, try checkPinnedIdentity(receiver, peerKey: tls.peerPublicKey, configDirectory: configDirectory)
            )
        } catch {
            tls.close()
            throw error
        }
    }

    /// The hello exchange on a connection whose key `connectChecked` proved.
    static func greet(
        _ receiver: ReceiverDescription, over tls: TLSConnection, peerID: String, configDirectory: String,
        senderName: String, timeout: Duration
    ) throws(CastError) -> ReceiverConnection {
        let reader = FrameReader(tls: tls, receiverName: receiver.name)
        do {
            try tls.write(Message.hello(Hello(name: senderName, software: "cast \(castVersion)")).frame().encoded())
        } catch {
            tls.close()
            throw CastError(.connectionLost, "lost \(printable(receiver.name)) while saying hello: \(error)")
        }
        var limits = SenderConnectionStateMachine.Limits()
        limits.reply = timeout
        var rules = SenderConnectionStateMachine(helloSentAt: now(), limits: limits)
        do throws(CastError) {
            let action = try reader.nextAction(
                timeout: { rules.readTimeout(now: now()) }, received: { rules.received($0, now: now()) },
                timedOut: { rules.timedOut() })
            guard case .reply(.welcome(let welcome))? = action else {
                throw CastError(
                    .connectionLost,
                    "\(printable(receiver.name)) sent \(action.map { "\($0)" } ?? "nothing") while welcome was expected"
                )
            }
            recordAddress(of: receiver, peerID: peerID, configDirectory: configDirectory)
            return ReceiverConnection(welcome: welcome, tls: tls, reader: reader, receiver: receiver, rules: rules)
        } catch {
            tls.close()
            throw error
        }
    }

    /// Asks the receiver what it is doing.
    public func status() throws(CastError) -> ReceiverStatus {
        try send(.statusRequest)
        while true {
            switch try nextAction() {
            case .reply(.status(let status)): return status
            // A watching connection's events may come before the reply.
            case .event, .status, .timeReply: continue
            case .reply(let other):
                throw CastError(
                    .connectionLost, "\(printable(welcome.name)) sent \(other.type) while status was expected")
            case .skip, .fail: continue  // never returned: skips are read past, failures thrown
            }
        }
    }

    /// Waits until the receiver's status satisfies `done`, at most `timeout`, and returns the last status seen: the
    /// connection watches the receiver (its events are pushed as they happen, whoever's session plays) and asks for
    /// the status again after each, instead of asking every few milliseconds. The connection watches from here on.
    public func awaitStatus(within timeout: Duration, _ done: (ReceiverStatus) -> Bool) throws(CastError)
        -> ReceiverStatus
    {
        var status = try status()
        guard !done(status) else { return status }
        let deadline = Self.now() + timeout
        try send(.watch)
        while let action = try nextAction(until: deadline) {
            switch action {
            case .status(let pushed): status = pushed
            case .event: status = try self.status()
            case .reply, .timeReply, .skip, .fail: continue
            }
            if done(status) { break }
        }
        return status
    }

    /// The next message the protocol lets through on this connection (`SenderConnectionStateMachine`): the reply a
    /// request waits for, an event, a watched status or a group's time reply; what the rules skip is read past.
    /// - Throws: `CastError` for a refusal, a message out of place, a deadline of the rules passed or a broken
    ///   connection.
    func nextAction() throws(CastError) -> SenderConnectionStateMachine.Action {
        // Without a deadline of the caller's, only the rules' deadlines end a wait, and they throw.
        guard let action = try nextAction(until: nil) else { preconditionFailure("no deadline was given") }
        return action
    }

    /// `nextAction`, or nil once `deadline` (the machine's clock, `now()`) has passed first.
    func nextAction(until deadline: Duration?) throws(CastError) -> SenderConnectionStateMachine.Action? {
        try reader.nextAction(
            timeout: {
                let own = rules.withLock { $0.readTimeout(now: Self.now()) }
                guard let deadline else { return own }
                let left = max(.zero, deadline - Self.now())
                return own.map { min($0, left) } ?? left
            },
            received: { message in rules.withLock { $0.received(message, now: Self.now()) } },
            timedOut: {
                let now = Self.now()
                return rules.withLock { rules in
                    // The rules' own deadline (which wins when both passed), or only the caller's.
                    guard let deadline, rules.readTimeout(now: now) != .zero, now >= deadline else {
                        return rules.timedOut()
                    }
                    return nil
                }
            })
    }

    /// The session this connection followed is over and its follower hands the connection back (its heartbeat
    /// stopped): idle again, for another `play` (`SenderConnectionStateMachine.sessionReleased`).
    func releaseSession() { rules.withLock { $0.sessionReleased() } }

    /// When the next heartbeat is due (the machine's clock, `now()`); nil when no session is followed.
    func heartbeatDue() -> Duration? { rules.withLock { $0.heartbeatDue() } }

    /// Sends one message.
    public func send(_ message: Message) throws(CastError) {
        try send { message }
    }

    /// Sends the message `make` makes once the write lock is held (a time request stamps itself there).
    func send(_ make: () -> Message) throws(CastError) {
        do {
            try writeLock.withLock { _ in
                let message = make()
                rules.withLock { $0.sending(message, now: Self.now()) }
                try tls.write(message.frame().encoded(), timeout: Self.replyTimeout)
            }
        } catch {
            throw CastError(.connectionLost, "lost \(printable(welcome.name)): \(error)")
        }
    }

    /// What a watching connection (`send(.watch)`) hears.
    public enum Pushed: Sendable {
        case status(ReceiverStatus)
        case event(PlaybackEvent)
    }

    /// The next status or event a watching connection hears, as long as it takes (the rules of
    /// `SenderConnectionStateMachine`: a refusal or a broken connection throws).
    public func nextPushed() throws(CastError) -> Pushed {
        while true {
            switch try nextAction() {
            case .status(let status): return .status(status)
            case .event(let event): return .event(event)
            case .reply, .timeReply, .skip, .fail: continue
            }
        }
    }

    /// Where the connection goes: host and port (for a media connection to the same receiver).
    public var receiver: ReceiverDescription { description }

    /// Closes the connection (close_notify, then the socket). Idempotent.
    public func close() { tls.close() }
}

/// Opens a TLS connection to a receiver with the sender's identity (created on first use).
func connectTLS(to receiver: ReceiverDescription, configDirectory: String, timeout: Duration) throws(CastError)
    -> TLSConnection
{
    let identity: Identity
    do {
        identity = try Identity.loadOrCreate(directory: configDirectory)
    } catch {
        throw CastError(.usage, "cannot use the sender identity in \(configDirectory): \(error)")
    }
    do {
        let fd = try TCP.connect(host: receiver.host, port: receiver.port, timeout: timeout)
        return try TLSConnection.connect(fd: fd, identity: identity, handshakeTimeout: timeout)
    } catch {
        throw CastError(
            .connectionLost, "cannot reach \(printable(receiver.name)) at \(printable(receiver.address)): \(error)")
    }
}

/// Reads whole messages from a TLS connection. Used by one thread at a time (the one that owns the connection's
/// request/response cycle); its decoder is in a `Mutex` all the same, so that a second reader would wait, not race.
final class FrameReader: Sendable {
    private let tls: TLSConnection
    private let receiverName: String
    private let decoder = Mutex(FrameDecoder())

    init(tls: TLSConnection, receiverName: String) {
        self.tls = tls
        // Only ever shown: escaped once here for every message below.
        self.receiverName = printable(receiverName)
    }

    /// The next message; `timeout` bounds the wait (nil waits for ever).
    func next(timeout: Duration?) throws(CastError) -> Message {
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now + $0 }
        return try decoder.withLock { decoder throws(CastError) -> Message in
            while true {
                do {
                    if let frame = try decoder.nextFrame() { return try Message(frame) }
                } catch {
                    throw CastError(.connectionLost, "\(receiverName) sent a message this sender cannot read: \(error)")
                }
                let bytes: [UInt8]
                do {
                    bytes = try tls.read(maxCount: 64 * 1024, timeout: deadline.map { max(.zero, $0 - clock.now) })
                } catch {
                    throw CastError(.connectionLost, "lost \(receiverName): \(error)")
                }
                if bytes.isEmpty { throw CastError(.connectionLost, "\(receiverName) closed the connection") }
                decoder.feed(bytes)
            }
        }
    }

    /// Reads until the rules let a message through (`SenderConnectionStateMachine`): `timeout` says how long the next
    /// read may wait, `received` what a message is, `timedOut` what a read that ran out of time means (nil: the
    /// caller's own deadline passed, which returns nil).
    func nextAction(
        timeout: () -> Duration?, received: (Message) -> SenderConnectionStateMachine.Action,
        timedOut: () -> SenderConnectionStateMachine.Failure?
    ) throws(CastError) -> SenderConnectionStateMachine.Action? {
        while true {
            let limit = timeout()
            if limit == .zero {
                guard let failure = timedOut() else { return nil }
                throw error(for: failure)
            }
            let message: Message
            let clock = ContinuousClock()
            let start = clock.now
            do {
                message = try next(timeout: limit)
            } catch {
                // A read that failed once its time was up is the deadline's, said as the rules say it.
                if let limit, clock.now - start >= limit {
                    guard let failure = timedOut() else { return nil }
                    throw self.error(for: failure)
                }
                throw error
            }
            switch received(message) {
            case .skip: continue
            case .fail(let failure): throw error(for: failure)
            case let action: return action
            }
        }
    }

    /// The user's error for a failure of the rules; a receiver's `error` becomes the matching CastError.
    func error(for failure: SenderConnectionStateMachine.Failure) -> CastError {
        switch failure {
        case .refused(let error, let waitingFor): unexpected(.error(error), waitingFor: waitingFor)
        case .unexpected(let type, let waitingFor):
            CastError(.connectionLost, "\(receiverName) sent \(type) while \(waitingFor) was expected")
        case .timedOut(let waitingFor, let after):
            CastError(.connectionLost, "lost \(receiverName): no \(waitingFor) within \(after)")
        }
    }

    /// The error for a message that is not the awaited one; a receiver's `error` becomes the matching CastError.
    func unexpected(_ message: Message, waitingFor: String) -> CastError {
        guard case .error(let error) = message else {
            return CastError(.connectionLost, "\(receiverName) sent \(message.type) while \(waitingFor) was expected")
        }
        if error.code == .busy {
            return CastError(.busy, "\(receiverName) is busy: \(printable(error.message))")
        }
        if error.code == .pairingRequired {
            return CastError(
                .notAuthorised,
                "\(receiverName) requires pairing: run cast pair \"\(receiverName)\" (\(printable(error.message)))")
        }
        return CastError(
            .connectionLost,
            "\(receiverName) closed the connection: \(printable(error.code.rawValue)): \(printable(error.message))")
    }
}
