import XCTest

@testable import CastProtocol

/// The probe over a simulated connection: the receiver's clock is seconds ahead of ours and runs 100 ppm fast, the
/// network takes its time each way, and the receiver takes its time to answer. No sockets.
final class ClockProbeTests: XCTestCase {
    /// A receiver whose clock reads `offset` + (1 + `skew`) × ours, behind a network taking `there` and `back`
    /// seconds, answering after `turnaround`; each exchange starts `interval` after the previous one returned.
    /// Our clock is simulated too: it starts at 1000 s (uptime) and only moves when the exchange says so.
    private final class SimulatedReceiver: ClockTransport {
        var offset: Double
        var skew: Double
        var there = 0.0001
        var back = 0.0001
        var turnaround = 0.00005
        var interval = 0.0
        /// Breaks the echo of the request's stamp (a confused or hostile receiver).
        var echoesWrongStamp = false
        /// Replies "before" the request arrived, as a broken receiver would.
        var repliesBackwards = false
        private(set) var ours = 1000.0
        private(set) var requests = 0

        init(offset: Double, skew: Double) {
            self.offset = offset
            self.skew = skew
        }

        private func theirs(atOurs time: Double) -> Double { offset + (1 + skew) * time }
        private func nanoseconds(_ seconds: Double) -> Int64 { Int64((seconds * 1e9).rounded()) }

        func exchange() throws -> (sent: Int64, reply: TimeReply, returned: Int64) {
            requests += 1
            ours += interval
            let sent = nanoseconds(ours)
            let arrived = ours + there
            let leaves = arrived + turnaround
            ours = leaves + back
            var reply = TimeReply(
                sent: echoesWrongStamp ? sent + 1 : sent, received: nanoseconds(theirs(atOurs: arrived)),
                replied: nanoseconds(theirs(atOurs: leaves)))
            if repliesBackwards { swap(&reply.received, &reply.replied) }
            return (sent, reply, nanoseconds(ours))
        }
    }

    /// What `cast status` does: 8 exchanges back to back find an offset of seconds to within a microsecond when the
    /// two directions take as long, and the round trip without the receiver's turnaround.
    func testEightExchangesFindTheOffset() throws {
        let receiver = SimulatedReceiver(offset: 7.25, skew: 100e-6)
        var probe = ClockProbe(exchanges: 8)
        let measurement = try XCTUnwrap(try probe.measure(over: receiver))
        XCTAssertEqual(receiver.requests, 8)
        XCTAssertEqual(measurement.exchanges, 8)
        // Their clock at our "now" (1000 s): 7.25 + 1.0001 × 1000 = 1007.35 s, so theirs − ours ≈ 7.35 s.
        let truth = 7.25 + 100e-6 * measurement.estimate.reference
        XCTAssertEqual(measurement.estimate.offset, truth, accuracy: 1e-6)
        XCTAssertEqual(measurement.roundTrip, 0.0002, accuracy: 1e-6)
    }

    /// The two directions may differ: the offset is then off by half the difference, never more than half the round
    /// trip (the limit of any exchange, docs/multiroom.md).
    func testAsymmetryCostsAtMostHalfTheRoundTrip() throws {
        let receiver = SimulatedReceiver(offset: -3, skew: 0)
        receiver.there = 0.0009
        receiver.back = 0.0001
        var probe = ClockProbe(exchanges: 8)
        let measurement = try XCTUnwrap(try probe.measure(over: receiver))
        XCTAssertEqual(measurement.estimate.offset, -3 + 0.0004, accuracy: 1e-6)
        XCTAssertLessThanOrEqual(abs(measurement.estimate.offset - -3), measurement.roundTrip / 2 + 1e-9)
    }

    /// Kept running (a group member: one exchange a second), the probe learns the rate too: 100 ppm fast, and the
    /// offset it predicts 10 s past the last exchange stays within a microsecond.
    func testRunningProbeLearnsTheSkew() throws {
        let receiver = SimulatedReceiver(offset: 12.345678, skew: 100e-6)
        receiver.interval = 1
        var probe = ClockProbe(exchanges: 30)
        let measurement = try XCTUnwrap(try probe.measure(over: receiver))
        XCTAssertEqual(measurement.estimate.skew, 100e-6, accuracy: 1e-7)
        let later = receiver.ours + 10
        XCTAssertEqual(measurement.estimate.theirs(atOurs: later), 12.345678 + (1 + 100e-6) * later, accuracy: 1e-6)
        // The estimate carries over to the next measure.
        _ = try probe.measure(over: receiver)
        XCTAssertEqual(probe.estimate?.skew ?? 0, 100e-6, accuracy: 1e-7)
    }

    /// A reply that echoes another stamp is a broken exchange: an error, not a wrong offset.
    func testWrongEchoIsAnError() {
        let receiver = SimulatedReceiver(offset: 1, skew: 0)
        receiver.echoesWrongStamp = true
        var probe = ClockProbe(exchanges: 8)
        XCTAssertThrowsError(try probe.measure(over: receiver)) { error in
            XCTAssertEqual((error as? ProtocolError)?.code, .unexpectedMessage)
        }
        XCTAssertEqual(receiver.requests, 1)
    }

    /// Replies that cannot be right (leaving before they arrived) are not believed: no measurement at all.
    func testImpossibleRepliesGiveNoMeasurement() throws {
        let receiver = SimulatedReceiver(offset: 1, skew: 0)
        receiver.repliesBackwards = true
        var probe = ClockProbe(exchanges: 8)
        XCTAssertNil(try probe.measure(over: receiver))
        XCTAssertEqual(receiver.requests, 8)
    }

    /// Whatever the connection throws comes through (the connection was lost).
    func testTransportFailureComesThrough() {
        struct Lost: Error {}
        struct Failing: ClockTransport {
            func exchange() throws -> (sent: Int64, reply: TimeReply, returned: Int64) { throw Lost() }
        }
        var probe = ClockProbe()
        XCTAssertThrowsError(try probe.measure(over: Failing())) { XCTAssertTrue($0 is Lost) }
    }

    /// A group member's exchanges come one at a time through its event reader (`add`): they feed the same estimator
    /// as `measure`, and a reply echoing another stamp is refused without touching it.
    func testExchangesFedOneAtATimeJoinTheEstimate() throws {
        let receiver = SimulatedReceiver(offset: 7.25, skew: 0)
        var probe = ClockProbe(exchanges: 4)
        _ = try XCTUnwrap(try probe.measure(over: receiver))
        for _ in 0..<4 {
            let (sent, reply, returned) = try receiver.exchange()
            XCTAssertNotNil(try probe.add(sent: sent, reply: reply, returned: returned))
        }
        let (sent, reply, returned) = try receiver.exchange()
        XCTAssertThrowsError(try probe.add(sent: sent + 1, reply: reply, returned: returned))
        let estimate = try XCTUnwrap(probe.estimate)
        XCTAssertEqual(estimate.offset, 7.25, accuracy: 1e-6)
    }
}
