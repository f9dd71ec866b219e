import CastMirror
import XCTest

final class MirrorRateTests: XCTestCase {
    private enum Fixtures {
        static func rate() -> MirrorRate {
            MirrorRate(start: 6_000_000, minimum: 500_000, maximum: 20_000_000, fps: 30)
        }

        /// Pictures of `bytes` each at 30 a second from `start` for `seconds`, on a link that takes `linkBytes` a
        /// second; the rate after it, the pictures skipped, and the longest queue seen.
        static func run(
            _ rate: inout MirrorRate, picture bytes: Int, link linkBytes: Int, from start: UInt64 = 0, seconds: Int
        ) -> (skipped: Int, longestQueue: Int) {
            var queued = 0
            var skipped = 0
            var longest = 0
            for tick in 0..<(seconds * 30) {
                let now = start + UInt64(tick) * 33_333
                queued = max(0, queued - linkBytes / 30)
                if rate.decide(queued: queued, now: now) == .encode {
                    let size = min(bytes, rate.frameBytes)
                    queued += size
                    rate.wrote(size)
                } else {
                    skipped += 1
                }
                longest = max(longest, queued)
            }
            return (skipped, longest)
        }
    }

    func testMoreThanAPictureWaitingSkipsThePictureButOneLargePictureKeepsTheRate() {
        var rate = Fixtures.rate()
        XCTAssertEqual(rate.frameBytes, 25_000)
        XCTAssertEqual(rate.decide(queued: 30_000, now: 1_000_000), .skip)
        XCTAssertEqual(rate.decide(queued: 10_000, now: 1_033_000), .encode, "within a picture's worth")
        XCTAssertEqual(rate.decide(queued: 0, now: 1_066_000), .encode)
        XCTAssertEqual(rate.bitRate, 6_000_000, "the queue drained within 100 ms: the link keeps up")
    }

    func testOnASlowLinkTheRateFollowsWhatLeavesAndTheQueueStaysWithinAPicture() {
        var rate = Fixtures.rate()
        // 4 Mbit/s: 500 kB a second; the encoder asks for 6 Mbit/s.
        _ = Fixtures.run(&rate, picture: 1_000_000, link: 500_000, seconds: 3)
        // It finds the link and then moves about it: a tenth up after a clear second, down to what left after a queue.
        XCTAssertLessThanOrEqual(rate.bitRate, 4_600_000, "the rate came down to the link")
        XCTAssertGreaterThan(rate.bitRate, 2_800_000, "and not far below it")
        let after = Fixtures.run(&rate, picture: 1_000_000, link: 500_000, from: 3_000_000, seconds: 10)
        XCTAssertLessThanOrEqual(after.longestQueue, 50_000, "no queue grows: at most 100 ms of the link waits")
    }

    func testAQueueOfSmallPicturesOnASlowReceiverSkipsButKeepsTheRate() {
        var rate = Fixtures.rate()
        // Pictures of 2 kB (a still screen) that the receiver takes only every third tick: what leaves is far below
        // the rate, but smaller pictures would not leave sooner.
        var queued = 0
        var skipped = 0
        for tick in 0..<90 {
            let now = UInt64(tick) * 33_333
            if tick % 3 == 0 { queued = 0 }
            if rate.decide(queued: queued, now: now) == .encode {
                queued += 2_000
                rate.wrote(2_000)
            } else {
                skipped += 1
            }
        }
        XCTAssertEqual(skipped, 0, "a picture within its share is encoded")
        XCTAssertEqual(rate.bitRate, 6_000_000)
    }

    func testTheRateNeverGoesBelowTheMinimum() {
        var rate = Fixtures.rate()
        _ = Fixtures.run(&rate, picture: 1_000_000, link: 1_000, seconds: 10)
        XCTAssertEqual(rate.bitRate, 500_000)
    }

    func testASecondWithNothingQueuedRaisesTheRateUpToTheMaximum() {
        var rate = Fixtures.rate()
        XCTAssertEqual(rate.decide(queued: 0, now: 0), .encode)
        XCTAssertEqual(rate.decide(queued: 0, now: 999_999), .encode)
        XCTAssertEqual(rate.bitRate, 6_000_000)
        XCTAssertEqual(rate.decide(queued: 0, now: 1_000_000), .encode)
        XCTAssertEqual(rate.bitRate, 6_600_000)
        for second in 2..<40 { _ = rate.decide(queued: 0, now: UInt64(second) * 1_000_000) }
        XCTAssertEqual(rate.bitRate, 20_000_000)
    }

    func testAQueueRestartsTheClearSecond() {
        var rate = Fixtures.rate()
        _ = rate.decide(queued: 0, now: 0)
        XCTAssertEqual(rate.decide(queued: 10_000, now: 900_000), .encode)
        XCTAssertEqual(rate.decide(queued: 0, now: 1_200_000), .encode)
        XCTAssertEqual(rate.bitRate, 6_000_000, "the clear second starts again after a queue")
    }
}
