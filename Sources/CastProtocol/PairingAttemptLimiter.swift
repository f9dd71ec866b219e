/// Rate limits pairing attempts on a receiver: the rule "wrong PINs back off, 5 in a row close pairing
/// for 60 s" as a value with no clock inside (every method takes `now`).
///
/// Use, on the receiver, one limiter for all connections:
/// - `beginAttempt(now:)` when a `pairingStart` arrives; anything but `.allowed` is answered with a
///   `PairingFailure` (`decision.failureReason`, `decision.retryAfterSeconds`) and no PIN is shown.
///   Only one attempt runs at a time, so parallel connections cannot multiply the guesses.
/// - then exactly one of `recordFailure(now:)` (wrong M1), `recordSuccess()` (M1 right) or
///   `abandonAttempt()` (connection gone before M1). An attempt never finished is taken back after
///   `attemptTimeout`, so a forgotten one cannot block pairing for good.
///
/// Wrong PINs in a row wait 1, 2, 4, 8 s; the 5th and every further one in a row close pairing for 60 s.
/// Only a success resets the count (a fresh PIN per attempt makes each attempt one 1-in-10 000 guess).
public struct PairingAttemptLimiter: Sendable, Equatable {
  /// Wrong PINs in a row that close pairing.
  public static let lockoutThreshold = 5
  /// How long pairing stays closed after `lockoutThreshold` wrong PINs in a row.
  public static let lockoutDuration: Duration = .seconds(60)
  /// The wait after the 1st, 2nd, ... wrong PIN in a row, below the threshold.
  public static let backoff: [Duration] = [.seconds(1), .seconds(2), .seconds(4), .seconds(8)]
  /// How long one attempt may stay unfinished before it no longer blocks others.
  public static let attemptTimeout: Duration = .seconds(120)

  /// What the receiver may do now.
  public enum Decision: Sendable, Equatable {
    /// An attempt may start (or: a new one may start next).
    case allowed
    /// A wrong PIN was entered recently: wait.
    case backingOff(retryAfter: Duration)
    /// Too many wrong PINs in a row: pairing is closed.
    case locked(retryAfter: Duration)
    /// Another attempt is in progress.
    case busy(retryAfter: Duration)

    /// The wait in whole seconds, rounded up (never 0 for a real wait), for `PairingFailure.retryAfter`.
    public var retryAfterSeconds: Int? {
      switch self {
      case .allowed: return nil
      case .backingOff(let wait), .locked(let wait), .busy(let wait):
        let (seconds, attoseconds) = wait.components
        return Int(seconds) + (attoseconds > 0 ? 1 : 0)
      }
    }

    /// The reason to send when refusing, `nil` for `.allowed`.
    public var failureReason: PairingFailure.Reason? {
      switch self {
      case .allowed: nil
      case .backingOff: .backingOff
      case .locked: .locked
      case .busy: .busy
      }
    }
  }

  /// Wrong PINs since the last success.
  public private(set) var consecutiveFailures = 0
  /// No attempt may start before this.
  private var closedUntil: ContinuousClock.Instant?
  /// When the attempt in progress started, if one is.
  private var attemptStarted: ContinuousClock.Instant?

  /// A limiter with no history.
  public init() {}

  /// What applies at `now`, without changing anything.
  public func decision(now: ContinuousClock.Instant) -> Decision {
    if let closedUntil, now < closedUntil {
      let wait = closedUntil - now
      return consecutiveFailures >= Self.lockoutThreshold ? .locked(retryAfter: wait) : .backingOff(retryAfter: wait)
    }
    if let attemptStarted, now < attemptStarted + Self.attemptTimeout {
      return .busy(retryAfter: attemptStarted + Self.attemptTimeout - now)
    }
    return .allowed
  }

  /// Starts an attempt if one may start at `now`; otherwise changes nothing and says why not.
  public mutating func beginAttempt(now: ContinuousClock.Instant) -> Decision {
    let decision = decision(now: now)
    if decision == .allowed { attemptStarted = now }
    return decision
  }

  /// The attempt's PIN was wrong. Returns the wait now in force (`.backingOff` or `.locked`), to tell the sender.
  @discardableResult
  public mutating func recordFailure(now: ContinuousClock.Instant) -> Decision {
    attemptStarted = nil
    consecutiveFailures += 1
    let wait =
      consecutiveFailures >= Self.lockoutThreshold
      ? Self.lockoutDuration : Self.backoff[min(consecutiveFailures, Self.backoff.count) - 1]
    closedUntil = now + wait
    return decision(now: now)
  }

  /// The attempt's PIN was right: the history is cleared.
  public mutating func recordSuccess() {
    self = PairingAttemptLimiter()
  }

  /// The attempt ended without a proof (the sender left): it counts neither way.
  public mutating func abandonAttempt() {
    attemptStarted = nil
  }
}
