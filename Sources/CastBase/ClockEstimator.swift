/// Estimates another clock (a group's, a receiver's) against ours from request/reply exchanges with NTP's four
/// timestamps, continuously: the offset between the two and the rate at which it drifts (two crystals are tens of
/// ppm apart), filtered against network jitter. The first piece of multiroom (docs/multiroom.md): each member keeps
/// one for the group clock and schedules output by it.
///
/// The filter follows what NTP's clock filter and chrony do, kept small. An exchange's offset is exact up to half its
/// round-trip delay (the two directions may differ), so only the fastest exchanges of a sliding window are believed
/// (`kept`: on a jittery, asymmetric path such as Wi-Fi's, the ones whose two directions were both quick), and each of
/// those counts by 1 / delay² (a reply held up 30 ms counts a thousandth of one that took a millisecond).
///
/// - The rate is the slope of a straight line through their offsets over our time (weighted least squares). A short
///   window cannot tell drift from jitter, so it is taken as 0 until the believed exchanges span `minimumRateSpan`
///   and tell it within `rateTolerance` (its standard error); then it moves toward what they say by at most
///   `maximumSkewChange` per second of our time, within `maximumSkew`: one window of bad exchanges cannot swing it.
/// - The offset is read from the believed exchanges of the last `offsetSpan` (with that rate), so that a rate not yet
///   known leaves a small error instead of one that grows with the window.
/// - Once the exchanges span `offsetSpan`, what is served (`estimate`) follows that offset by at most `maximumSlew`
///   per second of our time, as NTP slews a clock; a change beyond `stepThreshold` (a clock that stepped) is taken
///   at once.
///
/// Measured in ClockEstimatorTests: on a wired LAN's delays within tens of µs, on a path holding each direction 1 to
/// 8 ms within a millisecond, moving by at most `maximumSlew` from one second to the next.
///
/// A value type without I/O: the caller stamps the times (CLOCK_MONOTONIC on both sides) and feeds the exchanges.
public struct ClockEstimator: Sendable {
    /// One exchange: we sent a request at `sent` (our clock), the other side received it at `received` and replied
    /// at `replied` (its clock), and the reply came back at `returned` (ours). Seconds.
    public struct Exchange: Sendable, Equatable {
        public var sent: Double
        public var received: Double
        public var replied: Double
        public var returned: Double

        public init(sent: Double, received: Double, replied: Double, returned: Double) {
            self.sent = sent
            self.received = received
            self.replied = replied
            self.returned = returned
        }

        /// The time spent on the network, both ways (the other side's turnaround taken out).
        public var delay: Double { (returned - sent) - (replied - received) }
        /// Their clock minus ours, as this exchange sees it (exact when both directions took as long).
        public var offset: Double { ((received - sent) + (replied - returned)) / 2 }
        /// When (our clock) `offset` held.
        public var midpoint: Double { (sent + returned) / 2 }
    }

    /// The other clock as a line through our time: theirs = ours + offset + skew × (ours − reference).
    public struct Estimate: Sendable, Equatable {
        /// Their clock minus ours at `reference`.
        public var offset: Double
        /// How much faster their clock runs than ours (1e-4 = 100 ppm fast); 0 until it can be told.
        public var skew: Double
        /// Our time at which `offset` holds (the last trusted exchange's midpoint).
        public var reference: Double
        /// How far off the offset may be: the exchanges' weighted distance from the line (RMS), plus half the lowest
        /// delay (the asymmetry no exchange can reveal). Seconds.
        public var uncertainty: Double
        /// Whether `skew` was measured (false: taken as 0 until the exchanges tell a rate within `rateTolerance`).
        public var rateKnown: Bool = false

        /// Their clock's reading when ours reads `ours`.
        public func theirs(atOurs ours: Double) -> Double { ours + offset + skew * (ours - reference) }

        /// Our clock's reading when theirs reads `theirs`.
        public func ours(atTheirs theirs: Double) -> Double {
            (theirs - offset + skew * reference) / (1 + skew)
        }
    }

    /// Exchanges kept (the newest).
    public let window: Int
    /// The span of trusted exchanges (our seconds) from which a rate is estimated.
    public let minimumRateSpan: Double
    /// The largest skew believed (crystals and NTP-disciplined clocks are within a few hundred ppm).
    public let maximumSkew: Double
    /// Exchanges with a longer round trip are refused outright (a reply held up, or a wrong pairing of replies).
    public let maximumDelay: Double
    /// The most the rate may change per second of our time (skew per second).
    public let maximumSkewChange: Double
    /// The largest standard error of a rate taken from the exchanges: 25 ppm; a rate less sure is not taken.
    public static let rateTolerance = 25e-6
    /// The believed exchanges the offset is read from: the last 10 s of our time.
    public static let offsetSpan = 10.0
    /// How fast the served offset follows the exchanges: 100 µs per second (100 ppm).
    public static let maximumSlew = 100e-6
    /// A change of the offset taken at once rather than slewed: over 5 ms (a clock that stepped).
    public static let stepThreshold = 5e-3
    /// The fewest believed exchanges a rate is taken from.
    static let minimumRatePoints = 8

    private var exchanges: [Exchange] = []
    /// The rate as the exchanges tell it (paced), and whether they told one yet.
    private var rate: (skew: Double, known: Bool, at: Double)?
    /// The estimate from the exchanges kept; nil before the first.
    public private(set) var estimate: Estimate?

    /// An estimator keeping `window` exchanges.
    public init(
        window: Int = 64, minimumRateSpan: Double = 10, maximumSkew: Double = 500e-6, maximumDelay: Double = 1,
        maximumSkewChange: Double = 20e-6
    ) {
        precondition(window >= 4, "the window must hold at least four exchanges")
        self.window = window
        self.minimumRateSpan = minimumRateSpan
        self.maximumSkew = maximumSkew
        self.maximumDelay = maximumDelay
        self.maximumSkewChange = maximumSkewChange
    }

    /// Takes an exchange in; false (and nothing changes) for one that cannot be right: times that are not finite,
    /// a reply before its request, a negative or too long round trip, or one older than the newest kept.
    @discardableResult
    public mutating func add(_ exchange: Exchange) -> Bool {
        let times = [exchange.sent, exchange.received, exchange.replied, exchange.returned]
        guard times.allSatisfy(\.isFinite), exchange.returned >= exchange.sent, exchange.replied >= exchange.received,
            exchange.delay >= 0, exchange.delay <= maximumDelay,
            exchange.sent >= (exchanges.last?.sent ?? -.infinity)
        else { return false }
        exchanges.append(exchange)
        if exchanges.count > window { exchanges.removeFirst(exchanges.count - window) }
        let points = Self.kept(exchanges)
        guard let last = points.last else { return true }
        let reference = last.midpoint
        let skew = nextSkew(points, reference: reference)
        var offset = Self.offset(points, skew: skew, reference: reference)
        if let served = estimate, let oldest = exchanges.first, reference - oldest.midpoint >= Self.offsetSpan {
            // Once the exchanges span `offsetSpan` (before, the first ones are each far better than the one before):
            // slewed from where the served line is now, unless the clock stepped.
            let current = served.theirs(atOurs: reference) - reference
            let limit = Self.maximumSlew * max(reference - served.reference, 0)
            if abs(offset - current) <= Self.stepThreshold {
                offset = min(max(offset, current - limit), current + limit)
            }
        }
        let squares = points.reduce(0.0) { sum, point in
            let distance = point.offset - (offset + skew * (point.midpoint - reference))
            return sum + Self.weight(point) * distance * distance
        }
        let total = points.reduce(0.0) { $0 + Self.weight($1) }
        let lowestDelay = points.map(\.delay).min() ?? 0
        estimate = Estimate(
            offset: offset, skew: skew, reference: reference,
            uncertainty: (squares / total).squareRoot() + lowestDelay / 2, rateKnown: rate?.known ?? false)
        return true
    }

    /// The longest round trip believed, given the window's round trips: twice the fastest, at least half a
    /// millisecond more (on a wired LAN every exchange is within that, and weighs by its delay), and at least the
    /// fastest quarter (so that a lucky exchange does not leave too few).
    static func keptDelay(_ delays: [Double]) -> Double {
        let sorted = delays.sorted()
        guard let fastest = sorted.first else { return 0 }
        return max(2 * fastest, fastest + 0.5e-3, sorted[(sorted.count - 1) / 4])
    }

    /// The exchanges a fit believes: those within `keptDelay`, in order.
    static func kept(_ exchanges: [Exchange]) -> [Exchange] {
        let limit = keptDelay(exchanges.map(\.delay))
        return exchanges.filter { $0.delay <= limit }
    }

    /// An exchange's weight: 1 / delay², the delay taken as at least 50 µs (below that, timestamping jitter rules).
    private static func weight(_ exchange: Exchange) -> Double {
        let delay = max(exchange.delay, 50e-6)
        return 1 / (delay * delay)
    }

    /// The rate from `points` (weighted least squares), taken when they span `minimumRateSpan` and its standard error
    /// is within `rateTolerance`, approached by at most `maximumSkewChange` per second; else the last one.
    private mutating func nextSkew(_ points: [Exchange], reference: Double) -> Double {
        let previous = rate ?? (0, false, reference)
        rate = (previous.skew, previous.known, reference)
        guard let first = points.first, reference - first.midpoint >= minimumRateSpan,
            points.count >= Self.minimumRatePoints
        else { return previous.skew }
        let weights = points.map(Self.weight)
        let total = weights.reduce(0, +)
        let meanX = zip(points, weights).reduce(0) { $0 + $1.1 * ($1.0.midpoint - reference) } / total
        let meanY = zip(points, weights).reduce(0) { $0 + $1.1 * $1.0.offset } / total
        var sxx = 0.0
        var sxy = 0.0
        for (point, weight) in zip(points, weights) {
            let dx = point.midpoint - reference - meanX
            sxx += weight * dx * dx
            sxy += weight * dx * (point.offset - meanY)
        }
        guard sxx > 0 else { return previous.skew }
        let slope = sxy / sxx
        let residuals = zip(points, weights).reduce(0.0) { sum, pair in
            let distance = pair.0.offset - meanY - slope * (pair.0.midpoint - reference - meanX)
            return sum + pair.1 * distance * distance
        }
        // The slope's standard error: a rate the exchanges cannot tell yet is not taken (the last is held).
        guard (residuals / Double(points.count - 2) / sxx).squareRoot() <= Self.rateTolerance else {
            return previous.skew
        }
        let fitted = min(max(slope, -maximumSkew), maximumSkew)
        let step = maximumSkewChange * max(reference - previous.at, 0)
        let skew = min(max(fitted, previous.skew - step), previous.skew + step)
        rate = (skew, true, reference)
        return skew
    }

    /// The offset at `reference`: the weighted mean of the last `offsetSpan` of `points`, each carried to the
    /// reference by `skew`.
    private static func offset(_ points: [Exchange], skew: Double, reference: Double) -> Double {
        let recent = points.filter { $0.midpoint >= reference - offsetSpan }
        let total = recent.reduce(0.0) { $0 + weight($1) }
        return recent.reduce(0.0) { $0 + weight($1) * ($1.offset + skew * (reference - $1.midpoint)) } / total
    }
}
