/// Estimates another clock (a group's, a receiver's) against ours from request/reply exchanges with NTP's four
/// timestamps, continuously: the offset between the two and the rate at which it drifts (two crystals are tens of
/// ppm apart), filtered against network jitter. The first piece of multiroom (docs/multiroom.md): each member keeps
/// one for the group clock and schedules output by it.
///
/// The filter follows what NTP's clock filter and chrony do, kept small: an exchange's offset is exact up to half its
/// round-trip delay (the two directions may differ), so each exchange of a sliding window counts by 1 / delay²
/// (a reply held up 30 ms counts a thousandth of one that took a millisecond); a straight line through the offsets
/// over our time (weighted least squares) gives the offset now and the rate. A short window cannot tell drift from
/// jitter, so the rate is taken as 0 until the exchanges span `minimumRateSpan`, and it is bounded by `maximumSkew`.
/// Measured in ClockEstimatorTests (a minute at one exchange a second, ±100 ppm, a reply in five held up 30 ms): 10 s
/// past the last exchange within tens of µs on a wired LAN's delays, within 0.3 ms on Wi-Fi's.
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

    private var exchanges: [Exchange] = []
    /// The estimate from the exchanges kept; nil before the first.
    public private(set) var estimate: Estimate?

    /// An estimator keeping `window` exchanges.
    public init(window: Int = 64, minimumRateSpan: Double = 10, maximumSkew: Double = 500e-6, maximumDelay: Double = 1) {
        precondition(window >= 4, "the window must hold at least four exchanges")
        self.window = window
        self.minimumRateSpan = minimumRateSpan
        self.maximumSkew = maximumSkew
        self.maximumDelay = maximumDelay
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
        estimate = Self.fit(exchanges, minimumRateSpan: minimumRateSpan, maximumSkew: maximumSkew)
        return true
    }

    /// An exchange's weight: 1 / delay², the delay taken as at least 50 µs (below that, timestamping jitter rules).
    private static func weight(_ exchange: Exchange) -> Double {
        let delay = max(exchange.delay, 50e-6)
        return 1 / (delay * delay)
    }

    /// The weighted least-squares line through the exchanges' offsets over their midpoints.
    private static func fit(_ points: [Exchange], minimumRateSpan: Double, maximumSkew: Double) -> Estimate? {
        guard let last = points.last, let first = points.first else { return nil }
        let reference = last.midpoint
        let weights = points.map(weight)
        let total = weights.reduce(0, +)
        let meanX = zip(points, weights).reduce(0) { $0 + $1.1 * ($1.0.midpoint - reference) } / total
        let meanY = zip(points, weights).reduce(0) { $0 + $1.1 * $1.0.offset } / total
        var skew = 0.0
        if last.midpoint - first.midpoint >= minimumRateSpan {
            var sxx = 0.0
            var sxy = 0.0
            for (point, weight) in zip(points, weights) {
                let dx = point.midpoint - reference - meanX
                sxx += weight * dx * dx
                sxy += weight * dx * (point.offset - meanY)
            }
            if sxx > 0 { skew = min(max(sxy / sxx, -maximumSkew), maximumSkew) }
        }
        // The line through the weighted means with that slope, read at the reference.
        let offset = meanY - skew * meanX
        let squares = zip(points, weights).reduce(0.0) { sum, pair in
            let distance = pair.0.offset - (offset + skew * (pair.0.midpoint - reference))
            return sum + pair.1 * distance * distance
        }
        let lowestDelay = points.map(\.delay).min() ?? 0
        return Estimate(
            offset: offset, skew: skew, reference: reference, uncertainty: (squares / total).squareRoot() + lowestDelay / 2)
    }
}
