import XCTest

@testable import CastBase

final class RequestRateLimitTests: XCTestCase {
    /// 20 at once, then one per 50 ms: a flood of 1000 in a second gets 40 through (20 + 20 refilled), a sender
    /// keeping to 20 a second is never refused.
    func testTimeRequestsAreLimitedToTwentyASecond() {
        var flood = RequestRateLimit.timeRequests
        let admitted = (0..<1000).filter { flood.admit(at: 100 + Double($0) / 1000) }.count
        XCTAssertEqual(admitted, 40, accuracy: 1)
        var steady = RequestRateLimit.timeRequests
        XCTAssertTrue((0..<200).allSatisfy { steady.admit(at: 5 + Double($0) * 0.05) })
        var burst = RequestRateLimit.timeRequests
        XCTAssertEqual((0..<25).filter { _ in burst.admit(at: 7) }.count, 20)
        XCTAssertFalse(burst.admit(at: 7.01))
        XCTAssertTrue(burst.admit(at: 7.06))
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
