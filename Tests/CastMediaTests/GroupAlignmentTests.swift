import CastProtocol
import XCTest

@testable import CastMedia

/// A group member's trim from its alignments (`GroupAlignment.trim`): a correction out of range is a rule of the
/// group, held at its limit or at the last good rate and said so, never a value a `sync` event cannot carry.
final class GroupAlignmentTests: XCTestCase {
    private let second: UInt64 = 1_000_000_000

    /// An error that wants more than the limit gets the limit exactly, both ways, and says it is held; one within
    /// gets what it asks for.
    func testATrimAtAndPastItsLimitIsHeldAtIt() {
        for (error, expected, held) in [
            (0.002, 0.999, false),  // 2 ms ahead over 2 s: exactly the limit
            (0.003, 0.999, true), (-0.003, 1.001, true), (0.049, 0.999, true), (0.001, 0.9995, false),
        ] {
            var alignment = GroupAlignment(media: 0, time: 0)
            let result = alignment.trim(error: error, elapsed: 1, at: second)
            XCTAssertEqual(result.trim, expected, accuracy: 1e-12, "error \(error)")
            XCTAssertEqual(result.held, held, "error \(error)")
            XCTAssertLessThanOrEqual(abs(result.trim - 1), Player.maximumTrim + 1e-15)
            // What the `sync` event carries is within what the wire takes.
            let event = PlaybackEvent.sync(clampingOffset: error, trim: (result.trim - 1) * 1e6, limited: result.held)
            guard case .sync(_, let trim, let limited) = event else { return XCTFail() }
            XCTAssertLessThanOrEqual(abs(trim), PlaybackEvent.maximumSyncTrim)
            XCTAssertEqual(limited, held)
        }
    }

    /// The rate against the group's is believed within ±500 ppm (crystals) and measured over 3 s at least: a window of
    /// alignments that says 2000 ppm keeps the last good rate; one over a second is not used at all.
    func testAnImplausibleRateIsNotBelievedAndTheLastGoodOneHeld() {
        var alignment = GroupAlignment(media: 0, time: 0)
        _ = alignment.trim(error: 0, elapsed: 1, at: second)
        // A second later, the instants jittered by 2 ms: not measured yet (under the baseline).
        var result = alignment.trim(error: 0, elapsed: 2.002, at: 2 * second)
        XCTAssertEqual(result.trim, 1, accuracy: 1e-12)
        XCTAssertFalse(result.held)
        // 4 s on, 100 ppm fast: taken.
        result = alignment.trim(error: 0, elapsed: 1 + 4 * 1.0001, at: 5 * second)
        XCTAssertEqual(alignment.ratio, 1.0001, accuracy: 1e-9)
        XCTAssertEqual(result.trim, 1.0001, accuracy: 1e-9)
        // A bad window: 2000 ppm. The last good rate is held and said so.
        result = alignment.trim(error: 0, elapsed: 1 + 5 * 1.002, at: 6 * second)
        XCTAssertEqual(alignment.ratio, 1.0001, accuracy: 1e-9)
        XCTAssertEqual(result.trim, 1.0001, accuracy: 1e-9)
        XCTAssertTrue(result.held)
    }

    /// Values no arithmetic should make still give a trim within the limit (or the held rate), never a trap.
    func testValuesThatAreNotNumbersGiveTheHeldRate() {
        var alignment = GroupAlignment(media: 0, time: 0)
        for error in [Double.nan, .infinity, -.infinity] {
            let result = alignment.trim(error: error, elapsed: 1, at: second)
            XCTAssertTrue(result.trim.isFinite)
            XCTAssertLessThanOrEqual(abs(result.trim - 1), Player.maximumTrim + 1e-15)
            XCTAssertTrue(result.held)
        }
    }
}
