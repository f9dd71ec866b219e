import XCTest

@testable import CastMedia

/// The pointer over castd's window (issue #29): hidden, shown when it moves, hidden again after a second still.
final class PointerVisibilityTests: XCTestCase {
    func testHiddenUntilItMovesAndAgainAfterASecondStill() {
        let start = ContinuousClock.now
        func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }
        var pointer = PointerVisibility()
        XCTAssertFalse(pointer.isShown, "hidden from the start")
        XCTAssertFalse(pointer.elapsed(to: at(5000)), "nothing to hide")
        XCTAssertTrue(pointer.moved(at: at(100)), "shown when it moves")
        XCTAssertTrue(pointer.isShown)
        XCTAssertFalse(pointer.moved(at: at(600)), "already shown")
        XCTAssertFalse(pointer.elapsed(to: at(1599)), "still for less than a second since its last motion")
        XCTAssertTrue(pointer.elapsed(to: at(1600)), "hidden after a second still")
        XCTAssertFalse(pointer.isShown)
        XCTAssertFalse(pointer.elapsed(to: at(9000)))
        XCTAssertTrue(pointer.moved(at: at(9001)), "shown again")
    }
}
