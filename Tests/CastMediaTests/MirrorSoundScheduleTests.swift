import XCTest

@testable import CastMedia

/// When a mirrored screen's sound is heard (`MirrorSoundSchedule`), in microseconds: the sender's clock is 1 s behind
/// the receiver's, the quickest unit takes 5 ms.
final class MirrorSoundScheduleTests: XCTestCase {
    func testSoundWaitsForTheJitterBufferThenForThePictures() {
        var schedule = MirrorSoundSchedule(jitter: 50_000, tolerance: 10_000)
        XCTAssertNil(schedule.moment(captured: 0), "no unit yet: no moment")
        XCTAssertEqual(schedule.decide(captured: 0, frames: 480, rate: 48000, heard: 0), .play)
        schedule.arrived(captured: 100_000, at: 1_105_000)
        // The earliest a sample can be heard is 1 005 000 µs after capture; the jitter buffer adds 50 ms.
        XCTAssertEqual(schedule.moment(captured: 100_000), 1_155_000)
        // A slower unit does not move it; a quicker one does (the offset is the least seen).
        schedule.arrived(captured: 200_000, at: 1_230_000)
        XCTAssertEqual(schedule.moment(captured: 100_000), 1_155_000)
        schedule.arrived(captured: 300_000, at: 1_303_000)
        XCTAssertEqual(schedule.moment(captured: 100_000), 1_153_000)

        // Pictures shown 80 ms after the quickest: the sound waits for them (smoothed, so it comes in steps).
        for index in 0..<60 {
            let captured = UInt64(400_000 + index * 33_000)
            schedule.shown(captured: captured, at: Int64(captured) + 1_003_000 + 80_000)
        }
        XCTAssertEqual(schedule.moment(captured: 1_000_000)! - 2_003_000, 80_000, accuracy: 1_000)
        // Pictures quicker than the jitter buffer: the buffer holds.
        for index in 0..<60 {
            let captured = UInt64(3_000_000 + index * 33_000)
            schedule.shown(captured: captured, at: Int64(captured) + 1_003_000 + 10_000)
        }
        XCTAssertEqual(schedule.moment(captured: 5_000_000), 6_053_000)
    }

    func testEarlySoundWaitsLateSoundIsCutNeverDrifts() {
        var schedule = MirrorSoundSchedule(jitter: 50_000, tolerance: 10_000)
        schedule.arrived(captured: 0, at: 1_000_000)
        // Its moment is 1 050 000.
        XCTAssertEqual(schedule.decide(captured: 0, frames: 480, rate: 48000, heard: 1_045_000), .play)
        XCTAssertEqual(schedule.decide(captured: 0, frames: 480, rate: 48000, heard: 1_059_000), .play)
        XCTAssertEqual(schedule.decide(captured: 0, frames: 480, rate: 48000, heard: 1_020_000), .early(30_000))
        // 5 ms late: within the tolerance. 15 ms late: its first 720 frames go (all 480 of a 10 ms unit).
        XCTAssertEqual(schedule.decide(captured: 0, frames: 4800, rate: 48000, heard: 1_065_000), .late(frames: 720))
        XCTAssertEqual(schedule.decide(captured: 0, frames: 480, rate: 48000, heard: 1_065_000), .late(frames: 480))
    }

    func testADeviceThatPlaysABufferLaterMovesTheMoment() {
        var schedule = MirrorSoundSchedule(jitter: 50_000, tolerance: 10_000)
        schedule.arrived(captured: 0, at: 1_000_000)
        schedule.deviceLatency = 100_000
        // Written as it arrives it is heard 100 ms later: its moment leaves room for that, and the unit plays.
        XCTAssertEqual(schedule.moment(captured: 0), 1_110_000)
        XCTAssertEqual(schedule.decide(captured: 0, frames: 480, rate: 48000, heard: 1_000_000 + 100_000), .play)
    }

    func testAStalledDecoderDoesNotHoldTheSoundForEver() {
        var schedule = MirrorSoundSchedule(jitter: 50_000, tolerance: 10_000)
        schedule.arrived(captured: 0, at: 0)
        for index in 0..<100 { schedule.shown(captured: UInt64(index * 33_000), at: Int64(index * 33_000) + 5_000_000) }
        XCTAssertEqual(schedule.moment(captured: 0), MirrorSoundSchedule.maximumLag)
    }
}
