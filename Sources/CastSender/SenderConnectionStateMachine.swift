public import CastProtocol

/// The sender's side of one control connection, the mirror of the receiver's `ReceiverConnectionStateMachine`: what
/// may arrive when, what each message means there, and the connection's deadlines, with time as an input. No I/O:
/// `ReceiverConnection` tells it what it sends and hands it what it reads, and acts on what it returns;
/// `SenderConnectionStateMachineTests` drives every rule without a socket or a clock.
///
/// The rules:
/// - A request that has a reply (hello, a status request, play, a time request on its own) waits for that reply
///   alone, at most `Limits.reply`; an `error` in its place is the receiver's refusal (busy, pairing required, …),
///   anything else is a receiver that does not speak the protocol.
/// - An accepted play makes the connection follow a session: events are delivered in order, the heartbeat's status
///   replies (and a `notPlaying` error, a heartbeat that crossed the session's end) are skipped, a group's time replies
///   go to its clock. A heartbeat (a status request) is due every `Limits.heartbeat`; a receiver that says nothing
///   for `Limits.silence` (its replies to heartbeats included) is lost.
/// - A watching connection (`cast watch`) delivers events and statuses and waits as long as it takes.
/// - A session's follower may hand the connection back once the session finished (`sessionReleased`: a group's queue
///   plays its next file over the same connection): it is idle again, and what the old session still had on its way
///   (a heartbeat's status reply, a `notPlaying` error, a clock exchange's time reply) is skipped from then on.
///
/// Thread-safety: a value; `ReceiverConnection` keeps it under a lock (requests and heartbeats are sent from other
/// threads than the one that reads).
public struct SenderConnectionStateMachine: Sendable, Equatable {
    /// The connection's time limits.
    public struct Limits: Sendable, Equatable {
        /// How long a reply may take.
        public var reply: Duration = .seconds(5)
        /// While a session is followed: how often the sender says it is still there.
        public var heartbeat: Duration = .seconds(2)
        /// While a session is followed: how long the receiver may say nothing before it counts as lost.
        public var silence: Duration = .seconds(15)

        public init() {}
    }

    /// A reply a request waits for.
    public enum Reply: String, Sendable, Equatable {
        case welcome, status, playAccepted, timeReply
    }

    /// Where the connection is.
    public enum Phase: Sendable, Equatable {
        /// Open; no request waits and nothing is followed.
        case idle
        /// A request waits for `Reply`; the connection goes back to `then` with it.
        indirect case awaiting(Reply, since: Duration, then: Phase)
        /// Following a session: its events until its finish.
        case following
        /// Watching whatever plays (`cast watch`).
        case watching
    }

    /// What the reader does with a message.
    public enum Action: Sendable, Equatable {
        /// The reply a request waits for: hand it to that request.
        case reply(Message)
        /// An event the receiver pushed (a followed or watched session's).
        case event(PlaybackEvent)
        /// A status pushed to a watching connection.
        case status(ReceiverStatus)
        /// A time reply for a group's clock exchange, beside a session's events.
        case timeReply(TimeReply)
        /// Nothing to do: read on.
        case skip
        /// The connection failed: close it and say why.
        case fail(Failure)
    }

    /// Why the connection failed.
    public enum Failure: Sendable, Equatable {
        /// The receiver answered with an error (busy, pairing required, not playing, …) where `waitingFor` was due.
        case refused(ErrorMessage, waitingFor: String)
        /// The receiver sent a message that does not belong here.
        case unexpected(MessageType, waitingFor: String)
        /// Nothing came for `after`.
        case timedOut(waitingFor: String, after: Duration)
    }

    public let limits: Limits
    public private(set) var phase: Phase
    /// When the receiver last said anything.
    private var lastHeard: Duration
    /// When the last heartbeat went out (or the session began to be followed).
    private var lastHeartbeat: Duration
    /// A followed session was handed back (`sessionReleased`): its stragglers are skipped.
    private var released = false

    /// A connection on which the hello was just sent, at `now`.
    public init(helloSentAt now: Duration, limits: Limits = Limits()) {
        self.limits = limits
        self.phase = .awaiting(.welcome, since: now, then: .idle)
        self.lastHeard = now
        self.lastHeartbeat = now
    }

    /// The sender sends `message` at `now`.
    public mutating func sending(_ message: Message, now: Duration) {
        switch (phase, message) {
        case (.following, .statusRequest):
            // A heartbeat: its reply is skipped, not awaited.
            lastHeartbeat = now
        case (.following, .timeRequest), (.watching, .timeRequest):
            // A group's clock exchange beside the events: the reply comes as `.timeReply`.
            break
        case (_, .hello):
            phase = .awaiting(.welcome, since: now, then: .idle)
        case (_, .statusRequest):
            phase = .awaiting(.status, since: now, then: phase)
        case (_, .play):
            phase = .awaiting(.playAccepted, since: now, then: .following)
        case (_, .timeRequest):
            phase = .awaiting(.timeReply, since: now, then: phase)
        case (_, .watch):
            phase = .watching
        default:
            break
        }
    }

    /// The session this connection followed finished and its follower is done with it (no heartbeat goes out any
    /// more): the connection is idle, ready for another request, and skips what the old session still had on its way.
    public mutating func sessionReleased() {
        guard phase == .following else { return }
        phase = .idle
        released = true
    }

    /// The receiver sent `message`, read at `now`.
    public mutating func received(_ message: Message, now: Duration) -> Action {
        lastHeard = now
        if released, phase != .following, Self.isStraggler(message, awaiting: phase) { return .skip }
        switch phase {
        case .awaiting(let reply, _, let then):
            return answer(message, awaiting: reply, then: then, now: now)
        case .following:
            switch message {
            case .event(let event): return .event(event)
            case .status: return .skip
            case .error(let error) where error.code == .notPlaying: return .skip
            case .timeReply(let reply): return .timeReply(reply)
            case .error(let error): return .fail(.refused(error, waitingFor: "event"))
            default: return .fail(.unexpected(message.type, waitingFor: "event"))
            }
        case .watching:
            switch message {
            case .event(let event): return .event(event)
            case .status(let status): return .status(status)
            case .timeReply(let reply): return .timeReply(reply)
            case .error(let error): return .fail(.refused(error, waitingFor: "event"))
            default: return .skip
            }
        case .idle:
            if case .error(let error) = message { return .fail(.refused(error, waitingFor: "nothing")) }
            return .fail(.unexpected(message.type, waitingFor: "nothing"))
        }
    }

    /// What a released session may still have on its way when it is not the reply awaited: a heartbeat's status
    /// reply (or `notPlaying`), a clock exchange's time reply.
    private static func isStraggler(_ message: Message, awaiting phase: Phase) -> Bool {
        switch (message, phase) {
        case (.status, .awaiting(.status, _, _)), (.timeReply, .awaiting(.timeReply, _, _)): false
        case (.status, _), (.timeReply, _): true
        case (.error(let error), _): error.code == .notPlaying
        default: false
        }
    }

    private mutating func answer(_ message: Message, awaiting reply: Reply, then: Phase, now: Duration) -> Action {
        let matches: Bool
        switch (reply, message) {
        case (.welcome, .welcome), (.status, .status), (.playAccepted, .playAccepted), (.timeReply, .timeReply):
            matches = true
        default:
            matches = false
        }
        if matches {
            phase = then
            if then == .following && reply == .playAccepted { lastHeartbeat = now }
            return .reply(message)
        }
        switch message {
        // Pushed while a request waits on a followed or watched connection (a status request, a clock exchange):
        // the event still counts, but the awaited reply does not come from it.
        case .event(let event) where then == .following || then == .watching: return .event(event)
        case .timeReply(let reply) where then == .following: return .timeReply(reply)
        case .status where then == .following && reply != .status: return .skip
        case .error(let error): return .fail(.refused(error, waitingFor: reply.rawValue))
        default: return .fail(.unexpected(message.type, waitingFor: reply.rawValue))
        }
    }

    /// How long the reader may wait for the next message from `now`; nil waits as long as it takes. Zero: the
    /// deadline passed (`timedOut` says what failed).
    public func readTimeout(now: Duration) -> Duration? {
        let deadline: Duration
        switch phase {
        case .awaiting(_, let since, _): deadline = since + limits.reply
        case .following: deadline = lastHeard + limits.silence
        case .idle, .watching: return nil
        }
        return max(.zero, deadline - now)
    }

    /// The failure of a read whose `readTimeout` ran out.
    public func timedOut() -> Failure {
        switch phase {
        case .awaiting(let reply, _, _): .timedOut(waitingFor: reply.rawValue, after: limits.reply)
        case .following: .timedOut(waitingFor: "event", after: limits.silence)
        case .idle, .watching: .timedOut(waitingFor: "nothing", after: .zero)
        }
    }

    /// When the next heartbeat is due while a session is followed; nil when none is.
    public func heartbeatDue() -> Duration? {
        switch phase {
        case .following, .awaiting(_, _, .following): lastHeartbeat + limits.heartbeat
        default: nil
        }
    }
}
