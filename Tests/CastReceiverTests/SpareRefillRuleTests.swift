import XCTest

@testable import CastReceiver

/// The next spare decoder worker starts once the session that took the last one has started (first picture shown,
/// read-ahead burst over), or when it ended, or at the latest 2 s after it took its worker; a fixed 2 s cost
/// back-to-back sessions (a queue's next item, the bench's runs) about 100 ms each.
final class SpareRefillRuleTests: XCTestCase {
    private let t0 = ContinuousClock.now

    private func at(_ milliseconds: Int) -> ContinuousClock.Instant { t0 + .milliseconds(milliseconds) }

    func testWithNoSessionStartingTheSpareStartsAtOnce() {
        let rule = SpareRefillRule()
        XCTAssertEqual(rule.decision(at: at(0)), .now)
    }

    func testASessionThatShowsNothingHoldsTheSpareBackUntilTheFallback() {
        var rule = SpareRefillRule()
        rule.taken(by: 10, at: at(0))
        XCTAssertEqual(rule.decision(at: at(100)), .at(at(2000)))
        rule.read(by: 10, at: at(1500))
        XCTAssertEqual(rule.decision(at: at(1999)), .at(at(2000)))
        XCTAssertEqual(rule.decision(at: at(2000)), .now)
    }

    func testTheSpareStartsOnceTheFirstPictureIsShownAndTheReadsHavePaused() {
        var rule = SpareRefillRule()
        rule.taken(by: 10, at: at(0))
        rule.read(by: 10, at: at(5))
        rule.shown(by: 10, at: at(60))
        // The burst was over before the picture (a small file): at once.
        XCTAssertEqual(rule.decision(at: at(60)), .now)

        rule.taken(by: 11, at: at(1000))
        rule.shown(by: 11, at: at(1060))
        rule.read(by: 11, at: at(1070))
        XCTAssertEqual(rule.decision(at: at(1070)), .at(at(1120)))
        // Still reading ahead: later.
        rule.read(by: 11, at: at(1100))
        XCTAssertEqual(rule.decision(at: at(1120)), .at(at(1150)))
        XCTAssertEqual(rule.decision(at: at(1150)), .now)
    }

    func testAReadAheadThatNeverPausesEndsAtTheFallback() {
        var rule = SpareRefillRule()
        rule.taken(by: 10, at: at(0))
        rule.shown(by: 10, at: at(100))
        for ms in stride(from: 100, through: 2100, by: 10) {
            rule.read(by: 10, at: at(ms))
            // Asked again when the reads could have paused, never later than the fallback.
            XCTAssertEqual(rule.decision(at: at(ms)), ms >= 2000 ? .now : .at(at(min(ms + 50, 2000))), "at \(ms) ms")
        }
    }

    func testOnlyTheLatestSessionToTakeAWorkerCounts() {
        var rule = SpareRefillRule()
        rule.taken(by: 10, at: at(0))
        // A second session starts before the first has shown anything (it found no spare and started its own).
        rule.taken(by: 11, at: at(500))
        rule.shown(by: 10, at: at(600))
        rule.ended(by: 10)
        XCTAssertEqual(rule.decision(at: at(700)), .at(at(2500)))
        rule.shown(by: 11, at: at(800))
        XCTAssertEqual(rule.decision(at: at(800)), .now)
    }

    func testASessionThatEndsBeforeItsPictureReleasesTheSpare() {
        var rule = SpareRefillRule()
        rule.taken(by: 10, at: at(0))
        rule.read(by: 10, at: at(30))
        rule.ended(by: 10)
        XCTAssertEqual(rule.decision(at: at(40)), .now)
    }

    func testOnlyTheFirstPictureCounts() {
        var rule = SpareRefillRule()
        rule.taken(by: 10, at: at(0))
        rule.shown(by: 10, at: at(100))
        // A pause and resume later do not move the start.
        rule.shown(by: 10, at: at(1500))
        XCTAssertEqual(rule.decision(at: at(100)), .now)
    }
}
