/// A token bucket over one connection's requests of one kind: at most `burst` at once, refilled at `perSecond`.
/// Time requests are cheap to ask and each costs the receiver a stamped write, so a paired sender gets enough for a
/// clock (8 at once for `cast status`, one a second in a group) and no more (docs/protocol.md, "Clock exchange").
/// A value without I/O: the caller passes its monotonic time in seconds.
public struct RequestRateLimit: Sendable {
    /// The most requests admitted at once.
    public let burst: Double
    /// Requests admitted per second, in the long run.
    public let perSecond: Double
    private var tokens: Double
    private var last: Double?

    /// The time requests' limit: 40 a second, 40 at once: twice what a group asks at its quickest (20 a second
    /// while a start waits for its members' clocks, after the 8 quick exchanges it makes on reaching each), so that a
    /// sender's timer firing late and catching up is never refused; a flood still gets at most 80 in its first second.
    public static let timeRequests = RequestRateLimit(burst: 40, perSecond: 40)

    /// A bucket that starts full.
    public init(burst: Double, perSecond: Double) {
        precondition(burst >= 1 && perSecond > 0, "a rate limit must admit something")
        self.burst = burst
        self.perSecond = perSecond
        self.tokens = burst
    }

    /// Whether a request arriving at `now` (seconds, monotonic) is admitted; an admitted one takes a token.
    public mutating func admit(at now: Double) -> Bool {
        if let last, now > last { tokens = min(burst, tokens + (now - last) * perSecond) }
        last = max(now, last ?? now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
