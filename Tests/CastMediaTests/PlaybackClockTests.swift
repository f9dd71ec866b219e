import XCTest

@testable import CastMedia

/// The media clock's arithmetic at chosen instants (no threads, no sleeping): a start scheduled ahead, and the trim a
/// group member keeps in step with.
final class PlaybackClockTests: XCTestCase {
    private let second: UInt64 = 1_000_000_000
    private let t0: UInt64 = 5_000 * 1_000_000_000

    /// Started for an instant ahead, the clock stands at its position until then and runs from it; what it counts as
    /// played starts then too.
    func testAScheduledStartStandsUntilItsInstant() {
        let clock = PlaybackClock()
        clock.start(at: 2, time: t0 + second)
        XCTAssertEqual(clock.position(at: t0), 2)
        XCTAssertEqual(clock.position(at: t0 + second / 2), 2)
        XCTAssertEqual(clock.position(at: t0 + 2 * second), 3, accuracy: 1e-9)
        XCTAssertEqual(clock.dueTime(of: 2.5), t0 + 3 * second / 2)
        XCTAssertEqual(clock.played(at: t0), 0)
        XCTAssertEqual(clock.played(at: t0 + 2 * second), 1, accuracy: 1e-9)
    }

    /// A trim changes how fast the clock runs from the moment it is set, not where it stands; the rate the outputs
    /// read (the tempo) stays the user's.
    func testATrimRunsTheClockFasterFromThenOn() {
        let clock = PlaybackClock()
        clock.start(at: 0, time: t0)
        clock.setTrim(1.001, time: t0 + 10 * second)
        XCTAssertEqual(clock.position(at: t0 + 10 * second), 10, accuracy: 1e-9)
        XCTAssertEqual(clock.position(at: t0 + 20 * second), 20.01, accuracy: 1e-9)
        XCTAssertEqual(clock.rate, 1)
        let due = clock.dueTime(of: 20.01) ?? 0
        XCTAssertEqual(Double(Int64(due) - Int64(t0 + 20 * second)), 0, accuracy: 10, "ns")
        clock.setRate(2, time: t0 + 20 * second)
        XCTAssertEqual(clock.position(at: t0 + 21 * second), 22.012, accuracy: 1e-9)
    }
}
