import CastMirror
import XCTest

final class MirrorPacingTests: XCTestCase {
    private enum Fixtures {
        static let sharp = 26
        static let blurred = 40

        /// A pacing at 30 pictures a second that sent its first picture (sharp) at 0 and has settled.
        static func settled() -> MirrorPacing {
            var pacing = MirrorPacing(fps: 30, sharpQuantiser: sharp)
            XCTAssertTrue(pacing.wants(now: 0), "the first picture is always wanted")
            pacing.sent(at: 0, quantiser: sharp)
            return pacing
        }
    }

    func testAnUnchangedScreenSendsAPictureASecond() {
        var pacing = Fixtures.settled()
        XCTAssertFalse(pacing.isSettling)
        XCTAssertEqual(pacing.waitForChange(now: 100_000), 900_000, "waits for the damage until the keepalive")
        XCTAssertFalse(pacing.wants(now: 500_000))
        XCTAssertTrue(pacing.wants(now: 1_000_000), "the keepalive")
        pacing.sent(at: 1_000_000, quantiser: Fixtures.sharp)
        XCTAssertFalse(pacing.wants(now: 1_100_000))
    }

    func testAChangeIsCapturedAtOnceButNotFasterThanTheRate() {
        var pacing = Fixtures.settled()
        XCTAssertEqual(
            pacing.pause(now: 10_000), 6_667, "a picture went out 10 ms ago: the rest of 1/30 s, less half of it")
        XCTAssertEqual(pacing.pause(now: 200_000), 0)
        pacing.changed(at: 200_000)
        XCTAssertEqual(pacing.waitForChange(now: 200_000), 0)
        XCTAssertTrue(pacing.wants(now: 200_000))
    }

    func testSettlingGoesOnAtTheFullRateUntilTwoSharpPicturesInARow() {
        var pacing = Fixtures.settled()
        pacing.changed(at: 1_000)
        var now: UInt64 = 1_000
        // The change comes out blurred (the cap), then the unchanged screen sharpens it, for as long as it takes:
        // far beyond a second.
        for picture in 0..<90 {
            XCTAssertTrue(pacing.wants(now: now))
            // A picture's time after the change, the next change is waited for (see the test below); after that the
            // unchanged screen is taken at once.
            XCTAssertEqual(
                pacing.waitForChange(now: now), picture == 1 ? 33_333 : 0, "no waiting for damage while settling")
            pacing.sent(at: now, quantiser: Fixtures.blurred)
            now += 33_333
        }
        XCTAssertTrue(pacing.isSettling, "three seconds of blurred pictures: still settling")
        pacing.sent(at: now, quantiser: Fixtures.sharp)
        now += 33_333
        pacing.sent(at: now, quantiser: Fixtures.blurred)
        XCTAssertTrue(pacing.isSettling, "one sharp picture is not yet two in a row")
        now += 33_333
        pacing.sent(at: now, quantiser: Fixtures.sharp - 2)
        now += 33_333
        XCTAssertTrue(pacing.isSettling)
        pacing.sent(at: now, quantiser: Fixtures.sharp)
        XCTAssertFalse(pacing.isSettling, "two sharp pictures in a row: the receiver's picture converged")
        XCTAssertFalse(pacing.wants(now: now + 33_333))
        XCTAssertEqual(pacing.waitForChange(now: now), 1_000_000)
    }

    func testWhileTheScreenKeepsChangingTheNextChangeIsWaitedForNotTheTick() {
        var pacing = Fixtures.settled()
        // A screen that changes 30 times a second (a video, the benchmark's code), out of step with the ticks.
        pacing.changed(at: 1_000_000)
        XCTAssertEqual(pacing.waitForChange(now: 1_000_000), 0, "a change is captured at once")
        XCTAssertTrue(pacing.wants(now: 1_000_000))
        pacing.sent(at: 1_000_000, quantiser: Fixtures.blurred)
        // At the next tick the next change is waited for, rather than the unchanged screen taken: captured the
        // moment it comes, not up to a picture's time later at the tick after it.
        XCTAssertEqual(pacing.pause(now: 1_010_000), 6_667)
        XCTAssertEqual(pacing.waitForChange(now: 1_033_333), 33_333)
        pacing.changed(at: 1_050_000)
        XCTAssertEqual(pacing.waitForChange(now: 1_050_000), 0)
        XCTAssertTrue(pacing.wants(now: 1_050_000))
        pacing.sent(at: 1_050_000, quantiser: Fixtures.blurred)
        // No change for two pictures' time: the unchanged screen is sharpened at the full rate.
        XCTAssertEqual(pacing.waitForChange(now: 1_116_666), 0)
        XCTAssertTrue(pacing.wants(now: 1_116_666))
        XCTAssertTrue(pacing.isSharpening)
    }

    func testChangesAtTheRateAreEachCapturedAtOnceAlthoughSomeComeEarly() {
        var pacing = Fixtures.settled()
        // Changes 30 times a second, each up to 4 ms early or late (the painter's and the X server's jitter), and
        // each capture 1 ms after its change: none waits for the rate. (A least time of 1/30 s between pictures made
        // each wait for the one before's lateness, a wait that grew until it drifted through the whole interval.)
        var captured: UInt64 = 0
        for change in 1...300 {
            let jitter = [0, 4_000, -4_000, 2_000, -3_000][change % 5]
            let now = UInt64(1_000_000 + change * 33_333 + jitter)
            XCTAssertEqual(pacing.pause(now: now), 0, "change \(change)")
            pacing.changed(at: now)
            captured = now + 1_000
            XCTAssertTrue(pacing.wants(now: captured))
            pacing.sent(at: captured, quantiser: Fixtures.blurred)
        }
        XCTAssertGreaterThan(captured, 10_000_000)
    }

    func testChangesFasterThanTheRateGetNoMorePicturesThanTheRateOverASecond() {
        var pacing = Fixtures.settled()
        // Changes 120 times a second for a second: the loop of cast-mirror, with the pause as its only limit.
        var now: UInt64 = 1_000_000
        var pictures = 0
        while true {
            now += pacing.pause(now: now)
            guard now < 2_000_000 else { break }
            pacing.changed(at: now)
            XCTAssertTrue(pacing.wants(now: now))
            pacing.sent(at: now, quantiser: Fixtures.blurred)
            pictures += 1
            now += 8_333
        }
        XCTAssertLessThanOrEqual(pictures, 31, "30 a second, and one early")
        XCTAssertGreaterThanOrEqual(pictures, 29)
    }

    func testSkippedPicturesDoNotEndSettlingButTheLimitDoes() {
        var pacing = Fixtures.settled()
        pacing.changed(at: 0)
        // Nothing goes out for 9 s (a stalled queue): still settling, still wanted.
        XCTAssertTrue(pacing.wants(now: 9_000_000))
        XCTAssertTrue(pacing.isSettling)
        pacing.sent(at: 9_500_000, quantiser: Fixtures.blurred)
        XCTAssertTrue(pacing.wants(now: 9_600_000))
        // The limit after the last change: back to a picture a second.
        XCTAssertFalse(pacing.wants(now: MirrorPacing.settlingLimit + 1))
        XCTAssertFalse(pacing.isSettling)
    }

    func testAChangeDuringSettlingStartsTheCountAgain() {
        var pacing = Fixtures.settled()
        pacing.changed(at: 0)
        pacing.sent(at: 0, quantiser: Fixtures.sharp)
        pacing.changed(at: 20_000)
        pacing.sent(at: 33_333, quantiser: Fixtures.sharp)
        XCTAssertTrue(pacing.isSettling, "the sharp picture before the change does not count")
        pacing.sent(at: 66_666, quantiser: Fixtures.sharp)
        XCTAssertFalse(pacing.isSettling)
    }

    func testAChangeCutHardByTheCapAsksForAFreshStartBeforeSharpening() {
        var pacing = Fixtures.settled()
        pacing.changed(at: 0)
        XCTAssertFalse(pacing.isSharpening, "the picture at hand carries the change")
        pacing.sent(at: 0, quantiser: MirrorPacing.starvedQuantiser)
        XCTAssertTrue(pacing.wantsFreshStart)
        XCTAssertTrue(pacing.isSharpening, "the next picture only sharpens")
        pacing.startedAfresh()
        XCTAssertFalse(pacing.wantsFreshStart)
        pacing.sent(at: 33_333, quantiser: Fixtures.blurred)
        XCTAssertFalse(pacing.wantsFreshStart, "only a change's picture asks")
        // A change that came out well (typing, a small window) starts nothing afresh.
        pacing.changed(at: 50_000)
        pacing.sent(at: 66_666, quantiser: Fixtures.sharp + 5)
        XCTAssertFalse(pacing.wantsFreshStart)
    }

    func testAPictureWhoseQuantiserIsUnknownIsNotSharp() {
        var pacing = Fixtures.settled()
        pacing.changed(at: 0)
        for tick in 0..<5 { pacing.sent(at: UInt64(tick) * 33_333, quantiser: nil) }
        XCTAssertTrue(pacing.isSettling)
    }
}
