public import CastBase

/// The asking side of the clock exchange: runs a few `timeRequest`/`timeReply` exchanges over a connection that is
/// already open and feeds them to a `ClockEstimator`, giving the other side's clock against ours. `cast status`
/// runs 8 back to back; a group member will run one a second for as long as it plays (docs/multiroom.md).
///
/// No I/O of its own: the connection is a `ClockTransport`, so tests drive it with a simulated clock and network.
public struct ClockProbe: Sendable {
    /// What the probe found.
    public struct Measurement: Sendable, Equatable {
        /// The estimate of their clock against ours (seconds; `offset` = theirs − ours).
        public var estimate: ClockEstimator.Estimate
        /// The shortest round trip of the exchanges, the receiver's turnaround taken out (seconds): the offset is
        /// right to within half of it whatever the network's asymmetry.
        public var roundTrip: Double
        /// How many exchanges the estimator took (the others were refused as impossible).
        public var exchanges: Int
    }

    /// The exchanges to run.
    public let exchanges: Int
    private var estimator: ClockEstimator

    /// A probe running `exchanges` exchanges per `measure`, feeding `estimator` (kept across calls).
    public init(exchanges: Int = 8, estimator: ClockEstimator = ClockEstimator()) {
        precondition(exchanges >= 1, "a probe runs at least one exchange")
        self.exchanges = exchanges
        self.estimator = estimator
    }

    /// The estimate from every exchange so far; nil before the first one believed.
    public var estimate: ClockEstimator.Estimate? { estimator.estimate }

    /// How much of our time the estimate's exchanges span (seconds).
    public var span: Double { estimator.span }

    /// Runs the exchanges one after another. Returns nil when no reply could be believed (each was impossible: a
    /// reply before its request, a round trip over the estimator's bound); throws what the transport throws, and
    /// `ProtocolError(.unexpectedMessage)` for a reply that echoes another request's stamp.
    public mutating func measure(over transport: some ClockTransport) throws -> Measurement? {
        var accepted = 0
        var roundTrip = Double.infinity
        for _ in 0..<exchanges {
            let (sent, reply, returned) = try transport.exchange()
            guard let exchange = try add(sent: sent, reply: reply, returned: returned) else { continue }
            accepted += 1
            roundTrip = min(roundTrip, exchange.delay)
        }
        guard accepted > 0, let estimate = estimator.estimate else { return nil }
        return Measurement(estimate: estimate, roundTrip: roundTrip, exchanges: accepted)
    }

    /// Feeds one exchange (its request stamped `sent`, its reply stamped `returned` on arrival, nanoseconds) to the
    /// estimator: how a member kept in step feeds the exchanges it runs while playing. Returns the exchange when the
    /// estimator believed it, nil when it was impossible; throws `ProtocolError(.unexpectedMessage)` for a reply that
    /// echoes another request's stamp.
    @discardableResult
    public mutating func add(sent: Int64, reply: TimeReply, returned: Int64) throws -> ClockEstimator.Exchange? {
        guard reply.sent == sent else {
            throw ProtocolError(.unexpectedMessage, "timeReply echoes \(reply.sent), the request was stamped \(sent)")
        }
        let exchange = ClockEstimator.Exchange(
            sent: Self.seconds(sent), received: Self.seconds(reply.received), replied: Self.seconds(reply.replied),
            returned: Self.seconds(returned))
        return estimator.add(exchange) ? exchange : nil
    }

    /// Nanoseconds of CLOCK_MONOTONIC as seconds (a double keeps 0.1 µs up to 30 years of uptime).
    static func seconds(_ nanoseconds: Int64) -> Double { Double(nanoseconds) / 1e9 }
}

/// One side's connection as the probe sees it: send a `timeRequest` stamped with our CLOCK_MONOTONIC just before
/// it is written, wait for its `timeReply`, and stamp its arrival. Nanoseconds.
public protocol ClockTransport {
    /// One exchange: our clock when the request left (`sent`, the stamp it carried), the reply, and our clock when
    /// the reply was read (`returned`).
    func exchange() throws -> (sent: Int64, reply: TimeReply, returned: Int64)
}
