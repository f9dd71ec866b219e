import CastBase
import XCTest

/// The position of `cast status` (and of AirPlay's /playback-info): the last position event, moved on at the rate.
final class PositionEstimateTests: XCTestCase {
    private enum Fixtures {
        /// A report of 10 s made at wall-clock time 1000.
        static let seconds = 10.0
        static let at = 1000.0
    }

    private func estimate(after elapsed: Double, rate: Double, duration: Double? = nil) -> Double {
        PositionEstimate.position(
            reported: Fixtures.seconds, at: Fixtures.at, now: Fixtures.at + elapsed, rate: rate, duration: duration)
    }

    func testAtRateOneThePositionRunsWithTheWallClock() {
        XCTAssertEqual(estimate(after: 3, rate: 1), 13, accuracy: 1e-9)
    }

    func testTheRateScalesTheTimeSinceTheReport() {
        XCTAssertEqual(estimate(after: 3, rate: 2), 16, accuracy: 1e-9)
        XCTAssertEqual(estimate(after: 3, rate: 0.5), 11.5, accuracy: 1e-9)
    }

    func testAtRateZeroThePositionStands() {
        // Paused, seeking or stalled: the caller passes 0.
        XCTAssertEqual(estimate(after: 3, rate: 0), 10)
        XCTAssertEqual(estimate(after: 3, rate: -1), 10, "a negative rate does not run back")
        XCTAssertEqual(estimate(after: 3, rate: .nan), 10)
    }

    func testAWallClockThatSteppedBackDoesNotMoveThePositionBack() {
        XCTAssertEqual(estimate(after: -5, rate: 1), 10)
    }

    func testThePositionStopsAtTheDuration() {
        XCTAssertEqual(estimate(after: 30, rate: 2, duration: 25), 25)
        XCTAssertEqual(estimate(after: 3, rate: 2, duration: 25), 16, accuracy: 1e-9)
        // A report past the duration (the duration was a guess) is not pulled back.
        XCTAssertEqual(
            PositionEstimate.position(reported: 30, at: Fixtures.at, now: Fixtures.at + 1, rate: 1, duration: 25), 30)
    }
}
