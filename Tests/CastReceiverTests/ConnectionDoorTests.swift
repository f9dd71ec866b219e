import XCTest

@testable import CastReceiver

/// castd's door without sockets: handles are numbers, time is what each test says.
final class ConnectionDoorTests: XCTestCase {
    private enum Fixtures {
        static let limits = ConnectionAdmission.Limits(
            maximumAdmitted: 2, maximumUnadmitted: 2, maximumUnadmittedPerSource: 2)
    }

    /// Each handle comes back once: the evicted connection's at its eviction, an admitted one's at its admission, the
    /// others' at their end; a refused connection's is never kept.
    func testEachHandleIsGivenBackExactlyOnce() throws {
        var door = ConnectionDoor<Int>(limits: Fixtures.limits)
        guard case .serve(let first, nil) = door.arrive(from: "a", handle: 100),
            case .serve(let second, nil) = door.arrive(from: "b", handle: 101)
        else { return XCTFail("two places") }
        // The pool is full: the oldest makes room, and its handle is given back to wake it.
        guard case .serve(let third, let evicted) = door.arrive(from: "c", handle: 102) else {
            return XCTFail("a newcomer is served")
        }
        XCTAssertEqual(evicted, 100)
        XCTAssertNil(door.leave(first), "an evicted connection's handle was given back already")
        XCTAssertFalse(door.admit(first).admitted)
        // Admitted: its handle is no longer needed.
        let admitted = door.admit(second)
        XCTAssertTrue(admitted.admitted)
        XCTAssertEqual(admitted.release, 101)
        XCTAssertNil(door.leave(second))
        // Ended while waiting.
        XCTAssertEqual(door.leave(third), 102)
        // A source past its share is refused; its handle is not kept.
        _ = door.arrive(from: "d", handle: 103)
        _ = door.arrive(from: "d", handle: 104)
        guard case .refuse(let reason) = door.arrive(from: "d", handle: 105) else { return XCTFail("refused") }
        XCTAssertTrue(reason.contains("d already has 2"), reason)
        XCTAssertEqual(door.admission.unadmittedCount, 2)
    }

    /// Turned away: logged at once, then at most once per `logInterval`, with how many were not logged meanwhile.
    func testTurnedAwayIsLoggedOnceASecondWithTheRestCounted() {
        var door = ConnectionDoor<Int>(limits: Fixtures.limits)
        XCTAssertEqual(door.turnedAway(now: .seconds(10)), 0)
        XCTAssertNil(door.turnedAway(now: .milliseconds(10_100)))
        XCTAssertNil(door.turnedAway(now: .milliseconds(10_999)))
        XCTAssertEqual(door.turnedAway(now: .seconds(11)), 2)
        XCTAssertEqual(door.turnedAway(now: .seconds(20)), 0)
    }
}
