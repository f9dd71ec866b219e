/// Rate limits pairing attempts on a receiver, so that a script guessing PINs stays hopeless: the rule as a value
/// with no clock inside (every method that needs the time takes `now`).
///
/// Every attempt that showed a secret and did not pair is a failure: a wrong PIN, a sender that left before its
/// proof, an attempt that timed out. After each failure in a row the next attempt waits longer (`backoff`), and
/// after `attemptLimit` failures in a row pairing is closed until the operator reopens it (`reopen()`: castd does
/// so on SIGHUP and at start). With a fresh 4-digit PIN per attempt, each attempt is one 1-in-10 000 guess, so a
/// guesser's chance before the operator acts is 1 − (1 − 10⁻⁴)^`attemptLimit` (about 0.1 % for 10: see
/// `chanceOfGuessing`), however long it tries.
///
/// Use, on the receiver, one limiter for all connections:
/// - `beginAttempt(now:)` when a `pairingStart` arrives; anything but `.allowed` is answered with a
///   `PairingFailure` (`decision.failureReason`, `decision.retryAfterSeconds`) and no PIN is shown.
///   Only one attempt runs at a time, so parallel connections cannot multiply the guesses.
/// - then exactly one of `recordFailure(now:)` (wrong proof, or the sender left: `abandonAttempt(now:)`),
///   `recordSuccess()`, or `cancelAttempt()` (the receiver's own fault, e.g. it could not store the pairing), while
///   `isOpen(attempt:)` says the attempt (numbered by `attemptNumber` when it began) is still the one in progress.
///   An attempt never finished is ended as a failure after `attemptTimeout`, so a forgotten one cannot block
///   pairing, and its connection's late end must not count again nor end the next attempt.
public struct PairingAttemptLimiter: Sendable, Equatable {
    /// Failed attempts in a row that close pairing until the operator reopens it, unless configured lower.
    public static let defaultAttemptLimit = 10
    /// The wait after the 1st, 2nd, ... failure in a row; the last applies to every later one.
    public static let backoff: [Duration] = [
        .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(32), .seconds(60),
    ]
    /// How long one attempt may stay unfinished: the time to read the PIN and type it. Then it is a failure.
    public static let attemptTimeout: Duration = .seconds(60)

    /// What the receiver may do now.
    public enum Decision: Sendable, Equatable {
        /// An attempt may start (or: a new one may start next).
        case allowed
        /// An attempt failed recently: wait.
        case backingOff(retryAfter: Duration)
        /// Too many failed attempts in a row: pairing is closed until the operator reopens it.
        case closed
        /// Another attempt is in progress.
        case busy(retryAfter: Duration)

        /// The wait in whole seconds, rounded up (never 0 for a real wait), for `PairingFailure.retryAfter`; nil when
        /// there is nothing to wait for (also when waiting does not help: `.closed`).
        public var retryAfterSeconds: Int? {
            switch self {
            case .allowed, .closed: return nil
            case .backingOff(let wait), .busy(let wait):
                let (seconds, attoseconds) = wait.components
                return Int(seconds) + (attoseconds > 0 ? 1 : 0)
            }
        }

        /// The reason to send when refusing, `nil` for `.allowed`.
        public var failureReason: PairingFailure.Reason? {
            switch self {
            case .allowed: nil
            case .backingOff: .backingOff
            case .closed: .locked
            case .busy: .busy
            }
        }
    }

    /// Failed attempts in a row that close pairing (1...`defaultAttemptLimit`).
    public let attemptLimit: Int
    /// Failed attempts since the last success (or the operator's last reopening).
    public private(set) var consecutiveFailures = 0
    /// The number of the attempt that began last (1 for the first); it never goes back.
    public private(set) var attemptNumber = 0
    /// No attempt may start before this.
    private var closedUntil: ContinuousClock.Instant?
    /// When the attempt in progress started, if one is.
    private var attemptStarted: ContinuousClock.Instant?

    /// A limiter with no history that closes pairing after `attemptLimit` failures in a row.
    public init(attemptLimit: Int = defaultAttemptLimit) {
        precondition((1...Self.defaultAttemptLimit).contains(attemptLimit), "the attempt limit is 1...10")
        self.attemptLimit = attemptLimit
    }

    /// The chance that someone who guesses a fresh `digits`-digit PIN at every attempt pairs before pairing closes:
    /// 1 − (1 − 10^−digits)^attempts.
    public static func chanceOfGuessing(digits: Int, attempts: Int) -> Double {
        var miss = 1.0
        let single = 1 / (0..<digits).reduce(1.0) { value, _ in value * 10 }
        for _ in 0..<attempts { miss *= 1 - single }
        return 1 - miss
    }

    /// Whether pairing is closed until the operator reopens it.
    public var isClosed: Bool { consecutiveFailures >= attemptLimit }

    /// Whether the attempt numbered `attempt` is the one in progress (not finished, not timed out and replaced).
    public func isOpen(attempt: Int) -> Bool {
        attemptStarted != nil && attempt == attemptNumber
    }

    /// What applies at `now`, without changing anything.
    public func decision(now: ContinuousClock.Instant) -> Decision {
        if isClosed { return .closed }
        if let closedUntil, now < closedUntil { return .backingOff(retryAfter: closedUntil - now) }
        if let attemptStarted, now < attemptStarted + Self.attemptTimeout {
            return .busy(retryAfter: attemptStarted + Self.attemptTimeout - now)
        }
        return .allowed
    }

    /// Starts an attempt if one may start at `now`; otherwise says why not. An attempt left unfinished for
    /// `attemptTimeout` is counted as a failure first (its backoff running from when it timed out).
    public mutating func beginAttempt(now: ContinuousClock.Instant) -> Decision {
        if let attemptStarted, now >= attemptStarted + Self.attemptTimeout {
            recordFailure(now: attemptStarted + Self.attemptTimeout)
        }
        let decision = decision(now: now)
        if decision == .allowed {
            attemptStarted = now
            attemptNumber += 1
        }
        return decision
    }

    /// The attempt failed (a wrong proof). Returns what is now in force (`.backingOff` or `.closed`), to tell the
    /// sender.
    @discardableResult
    public mutating func recordFailure(now: ContinuousClock.Instant) -> Decision {
        attemptStarted = nil
        consecutiveFailures += 1
        closedUntil = now + Self.backoff[min(consecutiveFailures, Self.backoff.count) - 1]
        return decision(now: now)
    }

    /// The sender left before its proof, having seen the challenge (and a person, the PIN): a failure like a wrong
    /// PIN, or every guesser would hang up instead of being wrong. Nothing happens when no attempt is open.
    public mutating func abandonAttempt(now: ContinuousClock.Instant) {
        guard attemptStarted != nil else { return }
        recordFailure(now: now)
    }

    /// The attempt's proof was right: the history is cleared.
    public mutating func recordSuccess() {
        attemptStarted = nil
        consecutiveFailures = 0
        closedUntil = nil
    }

    /// The attempt ended by the receiver's own fault (it could not store the pairing): it counts neither way.
    public mutating func cancelAttempt() {
        attemptStarted = nil
    }

    /// Takes up the failures in a row counted before a restart (castd keeps them in its state directory): the limiter
    /// is closed when they reach `attemptLimit`, and otherwise backs off from `now` as after the last of them.
    public mutating func restore(consecutiveFailures failures: Int, now: ContinuousClock.Instant) {
        guard failures > 0 else { return }
        consecutiveFailures = min(failures, attemptLimit)
        closedUntil = now + Self.backoff[min(consecutiveFailures, Self.backoff.count) - 1]
    }

    /// The operator reopens pairing: failures are forgotten (an attempt in progress goes on).
    public mutating func reopen() {
        consecutiveFailures = 0
        closedUntil = nil
    }
}
