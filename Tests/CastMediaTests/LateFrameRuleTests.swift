import XCTest

@testable import CastMedia

/// When a window drops a frame, as values: the time now and the next frame's due time in, drop or present out.
final class LateFrameRuleTests: XCTestCase {
    private enum Fixtures {
        static let second: UInt64 = 1_000_000_000
        /// The next frame is due at 10 s on the monotonic clock.
        static let nextDue: UInt64 = 10 * second
    }

    func testAFrameWhoseSuccessorIsAlreadyDueIsDropped() {
        XCTAssertTrue(
            LateFrameRule.drops(
                firstOfSegment: false, duration: 0.04, nextDue: Fixtures.nextDue, now: Fixtures.nextDue + 1))
    }

    /// ffplay drops a late frame only when the next one is decoded and waiting: a pipeline slower than real time shows
    /// its late frames rather than none.
    func testALateFrameIsPresentedWhenTheNextIsNotDecodedYet() {
        XCTAssertFalse(
            LateFrameRule.drops(
                firstOfSegment: false, duration: 0.04, nextDue: Fixtures.nextDue, now: Fixtures.nextDue + 1,
                nextAtHand: false))
    }

    func testAFrameLateByLessThanItsDurationIsPresented() {
        // Due at 9.96 s, now 9.99 s: 30 ms late, but the next frame is not due yet.
        let now = Fixtures.nextDue - 10_000_000
        XCTAssertFalse(LateFrameRule.drops(firstOfSegment: false, duration: 0.04, nextDue: Fixtures.nextDue, now: now))
        XCTAssertFalse(
            LateFrameRule.drops(
                firstOfSegment: false, duration: 0.04, nextDue: Fixtures.nextDue, now: Fixtures.nextDue),
            "exactly when the next one is due: still presented")
    }

    func testTheFirstFrameOfASegmentIsNeverDropped() {
        XCTAssertFalse(
            LateFrameRule.drops(
                firstOfSegment: true, duration: 0.04, nextDue: Fixtures.nextDue, now: Fixtures.nextDue + Fixtures.second
            ))
    }

    func testAFrameOfUnknownDurationOrOnAStandingClockIsNeverDropped() {
        let late = Fixtures.nextDue + Fixtures.second
        XCTAssertFalse(LateFrameRule.drops(firstOfSegment: false, duration: 0, nextDue: Fixtures.nextDue, now: late))
        XCTAssertFalse(LateFrameRule.drops(firstOfSegment: false, duration: 0.04, nextDue: nil, now: late))
    }
}
