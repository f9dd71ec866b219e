import CastProtocol
import XCTest

@testable import CastSender

/// The values a group computes from timing, at and past each limit the wire or an `Int64` sets: each is either within
/// the range or nil (the control is not sent), never a trap and never a control castd would refuse (issue 29's
/// "Int64(...) in the group").
final class GroupTimingTests: XCTestCase {
    func testNanosecondsAtAndPastWhatAnInt64Holds() {
        XCTAssertEqual(GroupTiming.nanoseconds(1.5), 1_500_000_000)
        XCTAssertEqual(GroupTiming.nanoseconds(-2), -2_000_000_000)
        // The largest double below 2⁶³ ns converts; 2⁶³ itself (what Int64.max seconds / 1e9 rounds to) does not.
        XCTAssertNotNil(GroupTiming.nanoseconds(9.223_372_036_854_774e9))
        XCTAssertNil(GroupTiming.nanoseconds(9.223_372_036_854_775_807e9))
        XCTAssertNil(GroupTiming.nanoseconds(-9.3e9))
        for value in [Double.nan, .infinity, -.infinity, .greatestFiniteMagnitude] {
            XCTAssertNil(GroupTiming.nanoseconds(value), "\(value)")
        }
    }

    /// An instant the wire takes is never negative (castd refuses `resumeAt` and `align` with a negative one).
    func testAnInstantIsNeverNegative() {
        XCTAssertEqual(GroupTiming.instant(0), 0)
        XCTAssertEqual(GroupTiming.instant(12.000_000_001), 12_000_000_001)
        XCTAssertNil(GroupTiming.instant(-0.000_000_001))
        XCTAssertNil(GroupTiming.instant(.nan))
    }

    /// Positions and rates a member reported are brought within what a control carries; each result encodes and
    /// decodes as a control castd accepts.
    func testPositionsAndRatesAtAndPastTheirLimitsMakeControlsCastdAccepts() throws {
        let cases: [(Double, Double)] = [
            (0, 0), (-0.001, 0), (1e7, 1e7), (1e7 + 1, 1e7), (.infinity, 1e7), (-.infinity, 0), (.nan, 0),
        ]
        for (given, expected) in cases {
            let position = GroupTiming.position(given)
            XCTAssertEqual(position, expected, "\(given)")
            let control = PlaybackControl(.seek(position: position, exact: true))
            let decoded = try JSONDecoder().decode(PlaybackControl.self, from: try JSONEncoder().encode(control))
            XCTAssertEqual(decoded, control)
        }
        for (given, expected) in [(1.0, 1.0), (0.5, 0.5), (0.4, 0.5), (2, 2), (1e300, 2), (0, 0.5), (.nan, 1)] {
            XCTAssertEqual(GroupTiming.rate(given), expected, "\(given)")
        }
    }

    /// An `align`'s elapsed time and instant at and past their limits: sent only when castd takes them.
    func testAnAlignmentIsSentOnlyWithinItsLimits() throws {
        XCTAssertEqual(GroupTiming.elapsed(0), 0)
        XCTAssertEqual(GroupTiming.elapsed(1e7), 1e7)
        XCTAssertNil(GroupTiming.elapsed(1e7 + 1))
        XCTAssertNil(GroupTiming.elapsed(-0.001))
        XCTAssertNil(GroupTiming.elapsed(.nan))
        for (elapsed, at) in [(0.0, 0.0), (1e7, 9.2e9)] {
            let safeElapsed = try XCTUnwrap(GroupTiming.elapsed(elapsed))
            let instant = try XCTUnwrap(GroupTiming.instant(at))
            let control = PlaybackControl(.align(elapsed: safeElapsed, at: instant))
            let decoded = try JSONDecoder().decode(PlaybackControl.self, from: try JSONEncoder().encode(control))
            XCTAssertEqual(decoded, control)
        }
    }

    /// A start waits for a member's clock until its estimate is within 0.5 ms, or its exchanges span 2 s (on a
    /// jittery path no exchange narrows the bound, but 2 s of them settle the estimate): at and past each limit.
    func testAStartWaitsForAClockUntilItIsKnownOrTwoSecondsOfExchanges() {
        XCTAssertTrue(GroupTiming.clockSettled(uncertainty: 0.5e-3, span: 0))
        XCTAssertFalse(GroupTiming.clockSettled(uncertainty: 0.500_001e-3, span: 0))
        XCTAssertFalse(GroupTiming.clockSettled(uncertainty: 2.5e-3, span: 1.999))
        XCTAssertTrue(GroupTiming.clockSettled(uncertainty: 2.5e-3, span: 2))
        XCTAssertFalse(GroupTiming.clockSettled(uncertainty: nil, span: 1.999))
        XCTAssertTrue(GroupTiming.clockSettled(uncertainty: nil, span: 2))
        XCTAssertFalse(GroupTiming.clockSettled(uncertainty: .nan, span: 0))
        XCTAssertFalse(GroupTiming.clockSettled(uncertainty: 1e-3, span: .nan))
        XCTAssertTrue(GroupTiming.clockSettled(uncertainty: .nan, span: .infinity))
    }
}
