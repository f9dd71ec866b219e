import XCTest

@testable import CastMedia

/// The discontinuity rule as values: timestamps in, due times out.
final class PresentationTimelineTests: XCTestCase {
    private enum Fixtures {
        /// Places `stamps` (25 fps frames of `duration`) on a timeline begun at `anchor`; returns the due times.
        static func times(
            _ stamps: [Double?], duration: Double = 0.04, anchor: Double = 0, timeline: inout PresentationTimeline
        ) -> [Double] {
            timeline.begin(at: anchor)
            return stamps.map { timeline.place(stamp: $0, duration: duration).time }
        }

        static func assertEqual(
            _ a: [Double], _ b: [Double], file: StaticString = #filePath, line: UInt = #line
        ) {
            XCTAssertEqual(a.count, b.count, "\(a) vs \(b)", file: file, line: line)
            for (x, y) in zip(a, b) { XCTAssertEqual(x, y, accuracy: 1e-9, "\(a) vs \(b)", file: file, line: line) }
        }
    }

    func testWellFormedTimestampsAreTakenAsTheyAre() {
        var timeline = PresentationTimeline()
        // Including a gap of 9 s, jitter and a frame shown again a little earlier (under 10 s either way).
        let stamps: [Double] = [0, 0.04, 0.08, 9.08, 9.12, 9.1, 0.5]
        Fixtures.assertEqual(Fixtures.times(stamps, timeline: &timeline), stamps)
        XCTAssertEqual(timeline.discontinuities, 0)
        XCTAssertEqual(timeline.offset, 0)
    }

    /// Outside MPEG-TS and FLV the limit is an hour (ffplay's): a slideshow's picture that stays up for 30 s is played
    /// as declared, and the absurd jumps of damaged files are still taken out.
    func testTheLimitForContinuousFormatsKeepsLongPicturesAndStillCatchesAbsurdJumps() {
        var timeline = PresentationTimeline(maxJump: PresentationTimeline.maxJumpContinuous)
        let slides: [Double] = [0, 30, 60, 95]
        Fixtures.assertEqual(Fixtures.times(slides, duration: 30, timeline: &timeline), slides)
        XCTAssertEqual(timeline.discontinuities, 0)
        XCTAssertEqual(timeline.place(stamp: 95, duration: 30).duration, 30, "a 30 s picture is believed")

        var damaged = PresentationTimeline(maxJump: PresentationTimeline.maxJumpContinuous)
        let times = Fixtures.times([0, 0.04, 40_000.04, 80_000.04], timeline: &damaged)
        Fixtures.assertEqual(times, [0, 0.04, 0.08, 0.12])
        XCTAssertEqual(damaged.discontinuities, 2)
    }

    func testAForwardJumpOfMoreThanTenSecondsFollowsThePreviousFrame() {
        var timeline = PresentationTimeline()
        let times = Fixtures.times([0, 0.04, 0.08, 40_000.08, 40_000.12, 40_000.16], timeline: &timeline)
        Fixtures.assertEqual(times, [0, 0.04, 0.08, 0.12, 0.16, 0.2])
        XCTAssertEqual(timeline.discontinuities, 1)
    }

    func testABackwardJumpOfMoreThanTenSecondsFollowsThePreviousFrame() {
        var timeline = PresentationTimeline()
        let times = Fixtures.times([100, 100.04, 100.08, 3, 3.04], anchor: 100, timeline: &timeline)
        Fixtures.assertEqual(times, [100, 100.04, 100.08, 100.12, 100.16])
        XCTAssertEqual(timeline.discontinuities, 1)
    }

    func testTheBoundIsTenSecondsExclusive() {
        var timeline = PresentationTimeline()
        Fixtures.assertEqual(Fixtures.times([0, 10, 20.001], timeline: &timeline), [0, 10, 10.04])
        XCTAssertEqual(timeline.discontinuities, 1)
    }

    func testAFirstFrameFarFromTheAnchorStartsAtTheAnchor() {
        // ts-negative.mkv: audio 100000 s after video; the clock starts at the video's first frame.
        var timeline = PresentationTimeline()
        Fixtures.assertEqual(Fixtures.times([99_999.977, 100_000.0], timeline: &timeline), [0, 0.023])
        // Near the anchor (a key-frame seek lands audio a little before it): as it is.
        Fixtures.assertEqual(Fixtures.times([4.98, 5.0], anchor: 5, timeline: &timeline), [4.98, 5.0])
        XCTAssertEqual(timeline.offset, 0, "a new segment begins without the old offset")
    }

    func testEveryFrameOfDaysApartStampsPlaysAtTheNormalPace() {
        // ts-huge-pts.mp4: frames 40000 s apart, each declaring 40000 s: not believed, 1/25 s stands in.
        var timeline = PresentationTimeline()
        timeline.begin(at: 0)
        let placements = (0..<25).map { timeline.place(stamp: Double($0) * 40_000, duration: 40_000) }
        XCTAssertEqual(placements.last!.time, 24.0 / 25, accuracy: 1e-9)
        XCTAssertTrue(placements.allSatisfy { abs($0.duration - 1.0 / 25) < 1e-9 }, "\(placements)")
        XCTAssertEqual(timeline.discontinuities, 24)
    }

    func testAfterAJumpTheLastPlausibleIntervalStandsInForAnUnknownDuration() {
        // 30 fps frames without durations: the jump is closed by the frames' own interval.
        var timeline = PresentationTimeline()
        let times = Fixtures.times([0, 1.0 / 30, 2.0 / 30, 500], duration: 0, timeline: &timeline)
        Fixtures.assertEqual(times, [0, 1.0 / 30, 2.0 / 30, 3.0 / 30])
    }

    func testFramesWithoutTimestampsFollowThePreviousOne() {
        var timeline = PresentationTimeline()
        Fixtures.assertEqual(Fixtures.times([nil, nil, 0.08, nil], timeline: &timeline), [0, 0.04, 0.08, 0.12])
    }
}
