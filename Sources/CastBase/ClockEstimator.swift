/// Estimates another clock (a group's, a receiver's) against ours from request/reply exchanges with NTP's four
/// timestamps, continuously: the offset between the two and the rate at which it drifts (two crystals are tens of
/// ppm apart), filtered against network jitter. The first piece of multiroom (docs/multiroom.md): each member keeps
/// one for the group clock and schedules output by it.
///
/// An exchange's offset is exact up to half its round-trip delay (the two directions may differ). NTP's clock filter
/// and chrony believe the quickest exchanges; on a path whose two directions are held apart at random (Wi-Fi's), an
/// exchange quick both ways is rare (the product of two chances). So each direction is bounded on its own, as the
/// envelope methods of one-way delay measurement do: a request cannot arrive before it was sent, so the other clock
/// minus ours is below every `received − sent`; a reply cannot arrive before it left, so it is above every
/// `replied − returned`; the tightest bounds of each way are its quickest exchanges, found among a few dozen.
///
/// - The rate is the slope of a straight line (weighted least squares) through one point a second: the middle of that
///   second's two tightest bounds, weighted by 1 / their distance² (a second whose quickest reply was held up counts
///   little). A short span cannot tell drift from jitter, so it is taken as 0 until the points span
///   `minimumRateSpan` and tell it within `rateTolerance` (its standard error); the first rate is taken at once as far
///   as the fit is sure of it (`firstRateErrors` standard errors from it), then it moves toward what they say by at
///   most `maximumSkewChange` per second of our time, within `maximumSkew`: one bad window cannot swing it.
/// - The offset is the middle of each way's third tightest bound of the last `offsetSpan` (each carried to now with
///   that rate: the third, so that one lucky exchange does not move it); half their distance is `uncertainty`, a
///   bound that holds whatever the path's jitter (only the two ways' least delays may differ, which no exchange can
///   reveal).
/// - Once the exchanges span `offsetSpan`, what is served (`estimate`) follows that offset by at most `maximumSlew`
///   per second of our time, as NTP slews a clock, and never outside the bounds; a change beyond `stepThreshold` (a
///   clock that stepped) is taken at once.
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
        /// Our time at which `offset` holds (the last exchange's midpoint).
        public var reference: Double
        /// How far off the offset may be: half the distance between the two ways' bounds of the last `offsetSpan`
        /// (about half the sum of the two ways' quickest times: the asymmetry no exchange can reveal). Seconds.
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
    /// The largest standard error of a rate taken from the exchanges: 50 ppm; a rate less sure is not taken. (It is
    /// approached at `maximumSkewChange` a second, so a rate taken early moves the estimate little while it is noisy.)
    public static let rateTolerance = 50e-6
    /// The believed exchanges the offset is read from: the last 10 s of our time.
    public static let offsetSpan = 10.0
    /// How fast the served offset follows the exchanges: 100 µs per second (100 ppm).
    public static let maximumSlew = 100e-6
    /// A change of the offset taken at once rather than slewed: over 5 ms (a clock that stepped).
    public static let stepThreshold = 5e-3
    /// How far from its fit the first rate may be taken, in standard errors of the fit: 2 (a clock 100 ppm off, whose
    /// rate rose from 0 by `maximumSkewChange` a second before, left its estimate 0.2–0.4 ms behind in a group's
    /// first seconds).
    static let firstRateErrors = 2.0
    /// The fewest points (seconds with exchanges) a rate is taken from.
    static let minimumRatePoints = 3
    /// The span of our time whose exchanges make one point of the rate's fit: a second.
    static let pointSpan = 1.0

    private var exchanges: [Exchange] = []
    /// The rate as the exchanges tell it (paced), and whether they told one yet.
    private var rate: (skew: Double, known: Bool, at: Double)?
    /// The estimate from the exchanges kept; nil before the first.
    public private(set) var estimate: Estimate?

    /// How much of our time the exchanges kept span (seconds; 0 before the second).
    public var span: Double { (exchanges.last?.midpoint ?? 0) - (exchanges.first?.midpoint ?? 0) }

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
        let reference = exchange.midpoint
        let skew = nextSkew(Self.quickest(exchanges), reference: reference)
        let bounds = Self.bounds(exchanges, skew: skew, reference: reference)
        var offset = (bounds.lower + bounds.upper) / 2
        if let served = estimate, let oldest = exchanges.first, reference - oldest.midpoint >= Self.offsetSpan {
            // Once the exchanges span `offsetSpan` (before, the first ones are each far better than the one before):
            // slewed from where the served line is now, unless the clock stepped; but never left outside the bounds
            // the exchanges set (where it would be wrong for certain).
            let current = served.theirs(atOurs: reference) - reference
            let limit = Self.maximumSlew * max(reference - served.reference, 0)
            if abs(offset - current) <= Self.stepThreshold {
                offset = min(max(offset, current - limit), current + limit)
                if bounds.lower <= bounds.upper { offset = min(max(offset, bounds.lower), bounds.upper) }
            }
        }
        estimate = Estimate(
            offset: offset, skew: skew, reference: reference, uncertainty: abs(bounds.upper - bounds.lower) / 2,
            rateKnown: rate?.known ?? false)
        return true
    }

    /// A second's exchanges as one point of the rate's fit: where their quickest ways there and back place the
    /// other clock (the middle of the two bounds, at the middle of their times), and how far apart the two bounds are
    /// (`width`: the two quickest ways' sum, the asymmetry they leave room for).
    struct Point: Equatable {
        var time: Double
        var offset: Double
        var width: Double
        /// 1 / width², the width taken as at least 50 µs (below that, timestamping jitter rules): a second whose
        /// quickest reply was held up 30 ms counts a thousandth of one whose quickest ways took a millisecond. (Bounds
        /// that cross within a second, a fast rate on a quick path, count by how far they cross.)
        var weight: Double {
            let width = max(abs(self.width), 50e-6)
            return 1 / (width * width)
        }
    }

    /// The exchanges as one `Point` per second of our time (by their midpoints), in order.
    static func quickest(_ exchanges: [Exchange]) -> [Point] {
        var points: [Point] = []
        var second = -Double.infinity
        var there = (bound: Double.infinity, time: 0.0)
        var back = (bound: -Double.infinity, time: 0.0)
        func close() {
            guard there.bound.isFinite, back.bound.isFinite else { return }
            points.append(
                Point(
                    time: (there.time + back.time) / 2, offset: (there.bound + back.bound) / 2,
                    width: there.bound - back.bound))
        }
        for exchange in exchanges {
            let bin = (exchange.midpoint / pointSpan).rounded(.down)
            if bin != second {
                close()
                (second, there, back) = (bin, (.infinity, 0), (-.infinity, 0))
            }
            let (up, down) = (exchange.received - exchange.sent, exchange.replied - exchange.returned)
            if up < there.bound { there = (up, exchange.midpoint) }
            if down > back.bound { back = (down, exchange.midpoint) }
        }
        close()
        return points
    }

    /// The rate from `points` (weighted least squares), taken when they span `minimumRateSpan` and its standard error
    /// is within `rateTolerance`, approached by at most `maximumSkewChange` per second; else the last one.
    private mutating func nextSkew(_ points: [Point], reference: Double) -> Double {
        let previous = rate ?? (0, false, reference)
        rate = (previous.skew, previous.known, reference)
        guard let first = points.first, reference - first.time >= minimumRateSpan,
            points.count >= Self.minimumRatePoints
        else { return previous.skew }
        let weights = points.map(\.weight)
        let total = weights.reduce(0, +)
        let meanX = zip(points, weights).reduce(0) { $0 + $1.1 * ($1.0.time - reference) } / total
        let meanY = zip(points, weights).reduce(0) { $0 + $1.1 * $1.0.offset } / total
        var sxx = 0.0
        var sxy = 0.0
        for (point, weight) in zip(points, weights) {
            let dx = point.time - reference - meanX
            sxx += weight * dx * dx
            sxy += weight * dx * (point.offset - meanY)
        }
        guard sxx > 0 else { return previous.skew }
        let slope = sxy / sxx
        let residuals = zip(points, weights).reduce(0.0) { sum, pair in
            let distance = pair.0.offset - meanY - slope * (pair.0.time - reference - meanX)
            return sum + pair.1 * distance * distance
        }
        // The slope's standard error: a rate the exchanges cannot tell yet is not taken (the last is held).
        let standardError = (residuals / Double(points.count - 2) / sxx).squareRoot()
        guard standardError <= Self.rateTolerance else { return previous.skew }
        let fitted = min(max(slope, -maximumSkew), maximumSkew)
        let step = maximumSkewChange * max(reference - previous.at, 0)
        var skew = min(max(fitted, previous.skew - step), previous.skew + step)
        if !previous.known {
            // The first rate: the 0 held until now was no measurement, so the skew is taken at once as far as the fit
            // is sure of it (within `firstRateErrors` standard errors), and approached at the pace from there.
            let sure = Self.firstRateErrors * standardError
            skew = min(max(skew, fitted - sure), fitted + sure)
        }
        rate = (skew, true, reference)
        return skew
    }

    /// Where the other clock stands at `reference` (their clock minus ours), as each way's quickest exchanges of the
    /// last `offsetSpan` bound it, each carried to the reference by `skew`. A request cannot arrive before it was
    /// sent, so theirs − ours is below every `received − sent`; a reply cannot arrive before it left, so it is above
    /// every `replied − returned`. Each way's bound is its `boundRank`-th tightest (the third): a lone exchange that
    /// was far quicker than the rest one way (a thread that happened to wake at once) would move the middle by half
    /// its luck, and the other way has no such luck to match it; the third is a bound all the same, only a little
    /// looser. The two need not be the same exchange, so on a path whose directions are held apart at random
    /// (Wi-Fi's) each is found among a few dozen exchanges, where an exchange quick both ways is rare (the product of
    /// two chances). A clock that stepped leaves the bounds crossed (`lower` above `upper`) until the span has passed.
    static func bounds(_ exchanges: [Exchange], skew: Double, reference: Double) -> (lower: Double, upper: Double) {
        var uppers: [Double] = []
        var lowers: [Double] = []
        for exchange in exchanges.reversed() {
            guard exchange.midpoint >= reference - offsetSpan else { break }
            let carried = skew * (reference - exchange.midpoint)
            Self.keep(exchange.received - exchange.sent + carried, in: &uppers, by: <)
            Self.keep(exchange.replied - exchange.returned + carried, in: &lowers, by: >)
        }
        return (lowers.last ?? -.infinity, uppers.last ?? .infinity)
    }

    /// Each way's bound is the tightest but `boundRank − 1`: the third.
    static let boundRank = 3

    /// Keeps the `boundRank` first of `values` in the order `first`, sorted.
    private static func keep(_ value: Double, in values: inout [Double], by first: (Double, Double) -> Bool) {
        guard values.count < boundRank || first(value, values[values.count - 1]) else { return }
        let index = values.firstIndex { first(value, $0) } ?? values.count
        values.insert(value, at: index)
        if values.count > boundRank { values.removeLast() }
    }
}
