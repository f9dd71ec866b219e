import CastMirror
import XCTest

final class MirrorRateTests: XCTestCase {
    private enum Fixtures {
        static func rate() -> MirrorRate { MirrorRate(start: 6_000_000, minimum: 500_000, maximum: 20_000_000, fps: 30) }
    }

    func testMoreThanAPictureWaitingSkipsThePictureButOneLargePictureKeepsTheRate() {
        var rate = Fixtures.rate()
        XCTAssertEqual(rate.frameBytes, 25_000)
        XCTAssertEqual(rate.decide(queued: 30_000, now: 1_000_000), .skip)
        XCTAssertEqual(rate.decide(queued: 10_000, now: 1_033_000), .encode, "within a picture's worth")
        XCTAssertEqual(rate.decide(queued: 0, now: 1_066_000), .encode)
        XCTAssertEqual(rate.bitRate, 6_000_000, "the queue drained within 100 ms: the link keeps up")
    }

    func testAQueueThatStaysLowersTheRateAtMostEvery100ms() {
        var rate = Fixtures.rate()
        XCTAssertEqual(rate.decide(queued: 30_000, now: 1_000_000), .skip)
        XCTAssertEqual(rate.decide(queued: 30_000, now: 1_066_000), .skip)
        XCTAssertEqual(rate.bitRate, 6_000_000)
        XCTAssertEqual(rate.decide(queued: 30_000, now: 1_100_000), .skip)
        XCTAssertEqual(rate.bitRate, 4_800_000)
        XCTAssertEqual(rate.decide(queued: 30_000, now: 1_133_000), .skip)
        XCTAssertEqual(rate.bitRate, 4_800_000)
        XCTAssertEqual(rate.decide(queued: 30_000, now: 1_200_000), .skip)
        XCTAssertEqual(rate.bitRate, 3_840_000)
    }

    func testTheRateNeverGoesBelowTheMinimum() {
        var rate = Fixtures.rate()
        for step in 0..<100 { _ = rate.decide(queued: 10_000_000, now: UInt64(step) * 100_000) }
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
