import CastProtocol
import XCTest

@testable import CastMedia

/// The load state rules as values: measurements in, changes out.
final class BufferingRuleTests: XCTestCase {
    private enum Fixtures {
        /// A 60 s clip of 1 Mbit/s (125 000 bytes per media second), playing, 30 s to go.
        static func measurement(
            ahead: Double, rate: Double?, remaining: Double? = 30, ended: Bool = false, playing: Bool = true,
            canGrow: Bool = true
        ) -> BufferingRule.Measurement {
            BufferingRule.Measurement(
                ahead: ahead, remaining: remaining, inputRate: rate, mediaByteRate: 125_000, inputEnded: ended,
                playing: playing, canGrow: canGrow)
        }

        static func probed() -> BufferingRule {
            var rule = BufferingRule()
            XCTAssertEqual(rule.probed(), .playable)
            return rule
        }
    }

    func testNothingBeforeProbing() {
        var rule = BufferingRule()
        XCTAssertNil(rule.update(Fixtures.measurement(ahead: 0, rate: 1)))
        XCTAssertEqual(rule.loadState, [])
    }

    func testFastInputIsPlaythroughOK() {
        var rule = Fixtures.probed()
        // Twice the media's rate: never runs dry.
        XCTAssertEqual(
            rule.update(Fixtures.measurement(ahead: 1, rate: 250_000)), .loadState([.playable, .playthroughOK]))
        XCTAssertNil(rule.update(Fixtures.measurement(ahead: 2, rate: 250_000)))
    }

    func testUnknownRateOrDurationIsOnlyPlayableUntilTheInputEnded() {
        var rule = Fixtures.probed()
        XCTAssertNil(rule.update(Fixtures.measurement(ahead: 5, rate: nil)))
        XCTAssertNil(rule.update(Fixtures.measurement(ahead: 5, rate: 1e9, remaining: nil)))
        XCTAssertEqual(
            rule.update(Fixtures.measurement(ahead: 5, rate: nil, remaining: nil, ended: true)),
            .loadState([.playable, .playthroughOK]))
    }

    func testSlowInputNeedsEnoughBufferedToPlayThrough() {
        var rule = Fixtures.probed()
        // Half the media's rate, 30 s to go: needs A with 0.5·(30 − 0.5) ≥ 1.03·(30 − A), i.e. A ≥ 15.68 s.
        XCTAssertNil(rule.update(Fixtures.measurement(ahead: 15.5, rate: 62_500)))
        XCTAssertEqual(
            rule.update(Fixtures.measurement(ahead: 15.8, rate: 62_500)), .loadState([.playable, .playthroughOK]))
        // Kept without the reserve and margin (no flapping around the threshold): 0.5·30 ≥ 30 − A ...
        XCTAssertNil(rule.update(Fixtures.measurement(ahead: 15.1, rate: 62_500)))
        // ... and lost when the rate drops so that it would run dry.
        XCTAssertEqual(rule.update(Fixtures.measurement(ahead: 15.5, rate: 30_000)), .loadState(.playable))
    }

    func testWithoutARateAStallHoldsUntilTheRefillThreshold() {
        var rule = Fixtures.probed()
        XCTAssertEqual(rule.update(Fixtures.measurement(ahead: 0.05, rate: nil)), .stalled)
        XCTAssertEqual(rule.loadState, .stalled)
        XCTAssertTrue(rule.isStalled)
        // Still short of 2 s: stays stalled, says nothing.
        XCTAssertNil(rule.update(Fixtures.measurement(ahead: 1.5, rate: nil)))
        XCTAssertEqual(rule.update(Fixtures.measurement(ahead: 2.1, rate: nil)), .recovered(.playable))
        XCTAssertFalse(rule.isStalled)
    }

    func testOnASlowLinkAStallWaitsUntilTheRestArrivesInTime() {
        var rule = Fixtures.probed()
        // 60 % of the media's rate, 30 s to go: playthrough needs 0.6·(30 − 0.5) ≥ 1.03·(30 − A), A ≥ 12.82 s.
        XCTAssertEqual(rule.update(Fixtures.measurement(ahead: 0.05, rate: 75_000)), .stalled)
        // A fixed 2 s refill would end it here, and stall again within seconds.
        XCTAssertNil(rule.update(Fixtures.measurement(ahead: 2.5, rate: 75_000)))
        XCTAssertNil(rule.update(Fixtures.measurement(ahead: 12.7, rate: 75_000)))
        XCTAssertEqual(
            rule.update(Fixtures.measurement(ahead: 12.9, rate: 75_000)), .recovered([.playable, .playthroughOK]))
    }

    func testOnASlowLinkPlaybackWaitsBeforeItStartsAndThenNeverStalls() {
        var rule = Fixtures.probed()
        // 60 % of the media's rate, 30 s to go, the first frames only: starting now would stall at once.
        XCTAssertTrue(rule.waitsToStart(Fixtures.measurement(ahead: 0.1, rate: 75_000, playing: false)))
        XCTAssertEqual(rule.loadState, .stalled)
        XCTAssertEqual(
            rule.expectedWait(Fixtures.measurement(ahead: 0.1, rate: 75_000, playing: false)) ?? 0, 21.19,
            accuracy: 0.01)
        // The wait ends as a stall does: playthrough with its reserve and margin (A ≥ 12.82 s), not a fixed refill.
        XCTAssertNil(rule.update(Fixtures.measurement(ahead: 2.5, rate: 75_000, playing: false)))
        XCTAssertEqual(
            rule.update(Fixtures.measurement(ahead: 12.9, rate: 75_000, playing: false)),
            .recovered([.playable, .playthroughOK]))
        // Then it plays the rest: what is buffered plus what arrives stays ahead of the position, no stall.
        var (position, arrived) = (0.0, 12.9)
        while position < 30 {
            position += 0.1
            arrived = min(arrived + 0.6 * 0.1, 30)
            let m = Fixtures.measurement(
                ahead: max(arrived - position, 0), rate: 75_000, remaining: max(30 - position, 0), ended: arrived >= 30)
            XCTAssertNotEqual(rule.update(m), .stalled, "at \(position) s")
        }
        XCTAssertFalse(rule.isStalled)
    }

    /// The wait before the start is no longer than it must be: for a 12 s film over a link at 60 % of its rate it
    /// ends once the rest arrives half a second (the reserve) before it is needed at 1.03 times the measured rate,
    /// A ≥ 12 − 0.6·11.5 ÷ 1.03 = 5.30 s, where a 15 % margin waited for 5.74 s (0.7 s more of the wall); the rest
    /// then arrives before it is needed, and the end comes less than a second and a half after the last byte.
    func testOnASlowLinkTheWaitEndsWithASmallReserve() {
        var rule = Fixtures.probed()
        func measurement(_ ahead: Double, position: Double = 0) -> BufferingRule.Measurement {
            Fixtures.measurement(
                ahead: ahead, rate: 75_000, remaining: 12 - position, ended: position + ahead >= 12,
                playing: position > 0)
        }
        XCTAssertTrue(rule.waitsToStart(measurement(0.5)))
        XCTAssertNil(rule.update(measurement(5.25)))
        XCTAssertEqual(rule.update(measurement(5.35)), .recovered([.playable, .playthroughOK]))
        var (position, arrived) = (0.0, 5.35)
        var lastByte: Double?
        while position < 12 {
            position += 0.05
            arrived = min(arrived + 0.6 * 0.05, 12)
            if arrived >= 12 && lastByte == nil { lastByte = position }
            XCTAssertNotEqual(rule.update(measurement(max(arrived - position, 0), position: position)), .stalled)
        }
        let early = 12 - (lastByte ?? 12)
        XCTAssertGreaterThanOrEqual(early, 0.5, "the rest arrives the reserve before it is needed")
        XCTAssertLessThan(early, 1.5)
    }

    /// With the bytes still to arrive known, the rule judges with them (`M`, in media seconds at the media's average
    /// byte rate) instead of the media time not buffered (`R − A`): a 12 s film at 60 % of its rate needs
    /// `M ≤ 0.6·11.5 ÷ 1.03 = 6.70 s`. The demuxer's view undercounts what arrived where the first frames are heavy (a
    /// keyframe's bytes for its 0.04 s) and by the index read first, and waited a second longer for this film; a rest
    /// heavier than the average waits longer.
    func testTheBytesLeftStandForTheMediaStillToArrive() {
        var rule = Fixtures.probed()
        func measurement(ahead: Double, left: Double?) -> BufferingRule.Measurement {
            var m = Fixtures.measurement(ahead: ahead, rate: 75_000, remaining: 12, playing: false)
            m.bytesLeft = left.map { $0 * 125_000 }
            return m
        }
        XCTAssertTrue(rule.waitsToStart(measurement(ahead: 0.5, left: 11)))
        // A heavier rest: 7 s of media at the average rate still to come, though 6 s are buffered (R − A = 6).
        XCTAssertNil(rule.update(measurement(ahead: 6, left: 7)))
        XCTAssertEqual(rule.expectedWait(measurement(ahead: 6, left: 7)) ?? 0, 0.50, accuracy: 0.01)
        // 4.5 s demuxed: not enough in the demuxer's view (R − A = 7.5 > 6.70) ...
        XCTAssertNil(rule.update(measurement(ahead: 4.5, left: nil)))
        // ... but only 6.5 s of media still to arrive.
        XCTAssertEqual(rule.update(measurement(ahead: 4.5, left: 6.5)), .recovered([.playable, .playthroughOK]))
        // Kept while the rest arrives in time without the reserve and margin (0.6·12 ≥ 6.6) ...
        XCTAssertNil(rule.update(measurement(ahead: 4, left: 6.6)))
        // ... lost once it would not.
        XCTAssertEqual(rule.update(measurement(ahead: 4, left: 7.5)), .loadState(.playable))
    }

    /// The rate the rule judges with: the distinct bytes over the reading time since the first read, whatever the last
    /// two seconds' swing (answers arriving in steps); the last two seconds only once they fall below half of it.
    func testTheJudgedRateIsTheAverageSinceTheFirstReadUnlessTheLinkFell() throws {
        // 12 s of reading, 1.1 MB: 91 667 B/s, the last 2 s swinging between 56 000 and 102 000.
        for recent in [56_000.0, 102_000] {
            XCTAssertEqual(
                try XCTUnwrap(Player.judgedRate(recent: recent, distinct: 1_100_000, readingTime: 12)), 91_667,
                accuracy: 1)
        }
        // The link fell to a tenth: judged from what arrives now.
        XCTAssertEqual(Player.judgedRate(recent: 9_000, distinct: 1_100_000, readingTime: 12), 9_000)
        // Before half a second of reading, the last seconds' rate (or none).
        XCTAssertEqual(Player.judgedRate(recent: 50_000, distinct: 10_000, readingTime: 0.2), 50_000)
        XCTAssertNil(Player.judgedRate(recent: nil, distinct: 0, readingTime: 0))
    }

    /// The steady rate is measured between the ends of two reads at most `window` (4 s) of reading time apart: a link
    /// of 90 000 B/s delivering a read of 22 500 bytes every quarter second, after a gap of 1.3 s while starting (TCP's
    /// retransmissions), is judged at 90 000 once the gap is more than 4 s back, where the average since the first read
    /// stays 13 % lower after 10 s; before 4 s the average since the first read.
    func testTheSteadyRateLeavesOutAGapLongPast() {
        var deliveries = SteadyRate()
        XCTAssertEqual(deliveries.span.time, 0)
        var (elapsed, distinct): (Double, Int64) = (0.3, 16_384)
        deliveries.record(elapsed: elapsed, distinct: distinct)
        func deliver(for seconds: Double) {
            for _ in 0..<Int((seconds / 0.25).rounded()) {
                elapsed += 0.25
                distinct += 22_500
                deliveries.record(elapsed: elapsed, distinct: distinct)
            }
        }
        deliver(for: 1)
        XCTAssertEqual(Double(deliveries.span.bytes) / deliveries.span.time, 90_000, accuracy: 1)
        // The gap: one read takes 1.3 s more.
        elapsed += 1.3
        deliver(for: 2)
        let early = Double(deliveries.span.bytes) / deliveries.span.time
        XCTAssertLessThan(early, 0.75 * 90_000, "the gap is within the window")
        deliver(for: 6)
        XCTAssertEqual(Double(deliveries.span.bytes) / deliveries.span.time, 90_000, accuracy: 1)
        XCTAssertEqual(deliveries.span.time, 4, accuracy: 0.3)
        XCTAssertLessThan(Double(distinct - 16_384) / (elapsed - 0.3), 0.9 * 90_000, "the average since the first")
    }

    func testAFastLinkAStreamOrAFullBufferStartAtOnce() {
        // Playthrough is OK at once: no wait.
        var rule = Fixtures.probed()
        XCTAssertFalse(rule.waitsToStart(Fixtures.measurement(ahead: 0.1, rate: 250_000, playing: false)))
        XCTAssertEqual(rule.loadState, .playable)
        // A stream or a live URL (no duration), before the first rate, or with nothing more to buffer: no wait.
        for m in [
            Fixtures.measurement(ahead: 0.1, rate: 75_000, remaining: nil, playing: false),
            Fixtures.measurement(ahead: 0.1, rate: nil, playing: false),
            Fixtures.measurement(ahead: 0.1, rate: 75_000, playing: false, canGrow: false),
            Fixtures.measurement(ahead: 0.1, rate: 75_000, ended: true, playing: false),
        ] {
            var fresh = Fixtures.probed()
            XCTAssertFalse(fresh.waitsToStart(m), "\(m)")
        }
        // Before probing there is nothing to start.
        var unprobed = BufferingRule()
        XCTAssertFalse(unprobed.waitsToStart(Fixtures.measurement(ahead: 0, rate: 75_000, playing: false)))
    }

    func testPlaythroughEndsAStallOnlyWithTheRefillBuffered() {
        var rule = Fixtures.probed()
        XCTAssertEqual(rule.update(Fixtures.measurement(ahead: 0, rate: 10_000)), .stalled)
        // Twice the media's rate, but arrivals come in steps: 0.5 s is too thin to trust.
        XCTAssertNil(rule.update(Fixtures.measurement(ahead: 0.5, rate: 250_000)))
        XCTAssertEqual(
            rule.update(Fixtures.measurement(ahead: 2, rate: 250_000)), .recovered([.playable, .playthroughOK]))
        // Near the end, what is left is the refill.
        XCTAssertEqual(rule.update(Fixtures.measurement(ahead: 0, rate: 10_000, remaining: 1.5)), .stalled)
        XCTAssertEqual(
            rule.update(Fixtures.measurement(ahead: 1.5, rate: 250_000, remaining: 1.5)),
            .recovered([.playable, .playthroughOK]))
    }

    func testAStallEndsOnceNothingMoreCanBeBuffered() {
        var rule = Fixtures.probed()
        XCTAssertEqual(rule.update(Fixtures.measurement(ahead: 0, rate: 75_000)), .stalled)
        XCTAssertNil(rule.update(Fixtures.measurement(ahead: 6, rate: 75_000)))
        // The read-ahead is full (or its input failed): waiting on would wait for ever, as nothing is read until
        // playback takes some.
        XCTAssertEqual(rule.update(Fixtures.measurement(ahead: 6, rate: 75_000, canGrow: false)), .recovered(.playable))
    }

    func testTheExpectedWaitIsTheTimeUntilTheStallEnds() {
        var rule = Fixtures.probed()
        XCTAssertNil(rule.expectedWait(Fixtures.measurement(ahead: 0, rate: 75_000)), "not stalled")
        XCTAssertEqual(rule.update(Fixtures.measurement(ahead: 0.05, rate: 75_000)), .stalled)
        // 12.82 s of media needed, 0.6 media seconds arrive each second.
        let wait = try? XCTUnwrap(rule.expectedWait(Fixtures.measurement(ahead: 2.35, rate: 75_000)))
        XCTAssertEqual(wait ?? 0, 17.44, accuracy: 0.01)
        // A fast link: only the refill, at twice the media's rate.
        XCTAssertEqual(rule.expectedWait(Fixtures.measurement(ahead: 1, rate: 250_000)) ?? 0, 0.5, accuracy: 0.01)
        // Unknown rate, nothing arriving, or nothing more to wait for: no estimate.
        XCTAssertNil(rule.expectedWait(Fixtures.measurement(ahead: 1, rate: nil)))
        XCTAssertNil(rule.expectedWait(Fixtures.measurement(ahead: 1, rate: 0)))
        XCTAssertNil(rule.expectedWait(Fixtures.measurement(ahead: 1, rate: 75_000, canGrow: false)))
    }

    func testStallEndsWhenTheInputEnded() {
        var rule = Fixtures.probed()
        XCTAssertEqual(rule.update(Fixtures.measurement(ahead: 0, rate: 10_000)), .stalled)
        XCTAssertEqual(
            rule.update(Fixtures.measurement(ahead: 0.3, rate: 10_000, ended: true)),
            .recovered([.playable, .playthroughOK]))
    }

    func testNoStallWhilePausedSeekingOrAtTheEnd() {
        var rule = Fixtures.probed()
        XCTAssertNil(rule.update(Fixtures.measurement(ahead: 0, rate: 10_000, playing: false)))
        XCTAssertEqual(
            rule.update(Fixtures.measurement(ahead: 0, rate: 10_000, ended: true)),
            .loadState([.playable, .playthroughOK]))
        XCTAssertFalse(rule.isStalled)
    }

    func testAUserPauseDuringAStallKeepsTheStallUntilRefilled() {
        var rule = Fixtures.probed()
        XCTAssertEqual(rule.update(Fixtures.measurement(ahead: 0, rate: 10_000)), .stalled)
        XCTAssertNil(rule.update(Fixtures.measurement(ahead: 0.5, rate: nil, playing: false)))
        XCTAssertEqual(
            rule.update(Fixtures.measurement(ahead: 2.5, rate: nil, playing: false)), .recovered(.playable))
    }

    func testASeekCancelsTheStall() {
        var rule = Fixtures.probed()
        XCTAssertNil(rule.cancelStall(Fixtures.measurement(ahead: 0, rate: 10_000)))
        XCTAssertEqual(rule.update(Fixtures.measurement(ahead: 0, rate: 10_000)), .stalled)
        XCTAssertEqual(rule.cancelStall(Fixtures.measurement(ahead: 0, rate: 10_000)), .playable)
        XCTAssertFalse(rule.isStalled)
    }

    func testTheStreamReadLeastFarLimitsUnlessItEnded() {
        XCTAssertNil(BufferingRule.demuxedUpTo([]))
        // Interleaved audio and video: the one behind limits.
        XCTAssertEqual(BufferingRule.demuxedUpTo([12.0, 11.2]), 11.2)
        // An audio track that ended at 20 s while the video is demuxed to 40 s: the video limits.
        XCTAssertEqual(BufferingRule.demuxedUpTo([40.0, 20.0]), 40)
    }

    func testPlaybackRateCounts() {
        var rule = Fixtures.probed()
        // The input delivers 1.5× the media's rate: enough at 1×, not at 2× with little buffered.
        var m = Fixtures.measurement(ahead: 1, rate: 187_500)
        m.rate = 2
        XCTAssertNil(rule.update(m))
        m.rate = 1
        XCTAssertEqual(rule.update(m), .loadState([.playable, .playthroughOK]))
    }
}
