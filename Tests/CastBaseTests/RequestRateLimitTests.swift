import XCTest

@testable import CastBase

final class RequestRateLimitTests: XCTestCase {
    /// 40 at once, then one per 25 ms: a flood of 1000 in a second gets 80 through (40 + 40 refilled); a group
    /// asking at its quickest (8 at once on reaching a member, then 20 a second for the 2 s a start waits, with its
    /// timer's ticks late and bunched) is never refused.
    func testTimeRequestsAreLimitedToFortyASecond() {
        var flood = RequestRateLimit.timeRequests
        let admitted = (0..<1000).filter { flood.admit(at: 100 + Double($0) / 1000) }.count
        XCTAssertEqual(admitted, 80, accuracy: 1)
        var group = RequestRateLimit.timeRequests
        XCTAssertTrue((0..<8).allSatisfy { _ in group.admit(at: 5) })
        // Ticks every 50 ms, each fifth one 40 ms late and the next on time: bunched pairs.
        let ticks = (1...200).map { (tick: Int) -> Double in
            let late: Double = tick % 5 == 0 ? 0.04 : 0
            return 5 + Double(tick) * 0.05 + late
        }
        XCTAssertTrue(ticks.allSatisfy { group.admit(at: $0) })
        var burst = RequestRateLimit.timeRequests
        XCTAssertEqual((0..<45).filter { _ in burst.admit(at: 7) }.count, 40)
        XCTAssertFalse(burst.admit(at: 7.01))
        XCTAssertTrue(burst.admit(at: 7.03))
    }

    /// A clock that goes backwards (it must not, but the caller's) refills nothing and does not wedge the bucket.
    func testTimeGoingBackwardsRefillsNothing() {
        var limit = RequestRateLimit(burst: 1, perSecond: 1)
        XCTAssertTrue(limit.admit(at: 10))
        XCTAssertFalse(limit.admit(at: 5))
        XCTAssertFalse(limit.admit(at: 10.5))
        XCTAssertTrue(limit.admit(at: 11))
    }
}
