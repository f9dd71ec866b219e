/// The receiver's rules for the one session that owns its screen and speakers, as a pure state machine with time as
/// an input (in the style of `ReceiverConnectionStateMachine`): who may take the receiver over, how long a session
/// waits for its media connection, how long its sender may stay silent. `Receiver` tells it what happens and carries
/// out what it decides (starting, interrupting and ending `PlaybackSession`s, logging); `SessionRulesTests` drives
/// every rule without sockets, threads or a clock.
///
/// `Owner` names who asked for a session: a Cast sender's control connection or an AirPlay client (compared by
/// identity in the receiver, by value in tests). `Token` names one session.
///
/// Thread-safety: a value; `Receiver` keeps it under its state lock.
struct SessionRules<Owner: Equatable, Token: Equatable> {
    /// The time limits, from the receiver's configuration.
    struct Limits: Equatable {
        /// From the play request to the media connection (a session playing a URL has none to wait for).
        var mediaConnection: Duration
        /// The longest a Cast sender may say nothing while its session runs (a phone that slept mid-stream never
        /// closes its connection). AirPlay clients poll instead; their session ends with their connection.
        var senderSilence: Duration
    }

    /// Who plays now, and what the rules wait for.
    struct Session: Equatable {
        let token: Token
        let owner: Owner
        /// When the play request was accepted (the caller's clock: any monotonic time).
        let startedAt: Duration
        /// A media connection is still awaited.
        var awaitingMedia: Bool
        /// Its sender's silence is watched (a Cast sender's session).
        let watchesSender: Bool
    }

    /// What a play request gets.
    enum Decision: Equatable {
        /// It plays; the session that played before (another owner's, or the same owner's previous one) is
        /// interrupted, and its owner hears so.
        case start(interrupting: Token?)
        /// The take-over policy is `deny` and another owner's session runs: refused, the session plays on.
        case refuse(busyWith: Token)
    }

    /// Why the rules end a session.
    enum Ending: Equatable {
        /// The media connection did not arrive within `Limits.mediaConnection`.
        case mediaConnectionMissing(Duration)
        /// The sender said nothing for longer than `Limits.senderSilence`.
        case senderLost(Duration)

        /// The finish's message, as the sender and the log see it.
        var message: String {
            switch self {
            case .mediaConnectionMissing(let limit): "the media connection did not arrive within \(limit)"
            case .senderLost: "the sender was lost"
            }
        }
    }

    let policy: TakeoverPolicy
    let limits: Limits
    /// The session that owns the receiver; nil when idle (or once it finished).
    private(set) var current: Session?

    init(policy: TakeoverPolicy, limits: Limits) {
        self.policy = policy
        self.limits = limits
    }

    /// `owner` asks to play (session `token`) at time `now`. `needsMedia`: a file the sender serves (false for a
    /// URL the receiver opens itself); `watchesSender`: a Cast sender, whose silence ends the session.
    mutating func request(
        _ token: Token, by owner: Owner, needsMedia: Bool, watchesSender: Bool, now: Duration
    ) -> Decision {
        if let running = current, policy == .deny, running.owner != owner {
            return .refuse(busyWith: running.token)
        }
        let interrupted = current?.token
        current = Session(
            token: token, owner: owner, startedAt: now, awaitingMedia: needsMedia,
            watchesSender: watchesSender)
        return .start(interrupting: interrupted)
    }

    /// Session `token`'s media connection arrived (or its engine started some other way).
    mutating func mediaArrived(_ token: Token) {
        guard current?.token == token else { return }
        current?.awaitingMedia = false
    }

    /// Session `token` finished, for whatever reason: the receiver is free (unless another session replaced it).
    mutating func finished(_ token: Token) {
        guard current?.token == token else { return }
        current = nil
    }

    /// Whether the rules end the running session at time `now`, its sender having been silent for
    /// `senderSilence` (nil when unknown). The media connection's deadline comes first.
    func check(now: Duration, senderSilence: Duration?) -> (token: Token, ending: Ending)? {
        guard let session = current else { return nil }
        if session.awaitingMedia && now - session.startedAt >= limits.mediaConnection {
            return (session.token, .mediaConnectionMissing(limits.mediaConnection))
        }
        if session.watchesSender, let silence = senderSilence, silence > limits.senderSilence {
            return (session.token, .senderLost(limits.senderSilence))
        }
        return nil
    }

    /// When `check` should be asked next, at the latest, for the running session: its media deadline while it
    /// waits for one, else a second from `now` while its sender is watched (silence is known only by looking);
    /// nil when nothing is due.
    func nextCheck(now: Duration) -> Duration? {
        guard let session = current else { return nil }
        var next: Duration?
        if session.awaitingMedia { next = session.startedAt + limits.mediaConnection }
        if session.watchesSender {
            next = min(next ?? .seconds(Int64.max / 2), now + Self.silenceCheckInterval)
        }
        return next.map { max($0, now) }
    }

    /// How often a watched sender's silence is looked at.
    static var silenceCheckInterval: Duration { .seconds(1) }
}
