import CastBase
import CastProtocol
import Foundation
import XCTest

@testable import CastMedia

/// An output sleeping towards a due time (`PlaybackControl.sleep(untilDue:on:)`) sleeps until that time or a change,
/// nothing else: no timer wakes it to look again, and every change of the clock or the control reaches it at once.
///
/// The bounds are hang bounds only (seconds); how fast a change reaches a sleeper is printed as `wake-on-change` and
/// kept in docs/benchmarks.md.
final class PlaybackControlTests: XCTestCase {
    /// How long a sleeper is watched for a wake-up that nothing caused: longer than any step the outputs ever slept in.
    private let quiet = 0.4
    /// The hang bound for a wake-up that a change caused.
    private let hang = 10.0

    /// A clock that the control hears about, as the player wires them.
    private func wired() -> (CastMedia.PlaybackControl, PlaybackClock) {
        let control = CastMedia.PlaybackControl()
        return (control, PlaybackClock(onChange: { control.clockChanged() }))
    }

    /// Runs `sleep(untilDue:on:)` once on a thread of its own; the returned monitor holds its answer once it woke.
    private func sleeper(_ control: CastMedia.PlaybackControl, _ clock: PlaybackClock, media: Double) -> Monitor<Bool?>
    {
        let answer = Monitor<Bool?>(nil)
        startDetachedThread(name: "test output") {
            let due = control.sleep(untilDue: media, on: clock)
            answer.withLock { $0 = due }
        }
        return answer
    }

    /// Waits for the sleeper to wake after `change`; returns how long that took (seconds), failing after the hang bound.
    private func wakeTime(of answer: Monitor<Bool?>, after change: () -> Void) -> Double {
        XCTAssertFalse(answer.wait(until: { $0 != nil }, timeout: quiet), "the sleeper woke with nothing changed")
        let changed = Monotonic.now()
        change()
        XCTAssertTrue(answer.wait(until: { $0 != nil }, timeout: hang), "the change did not wake the sleeper")
        return Double(Monotonic.now() - changed) / 1e9
    }

    /// Re-anchoring the clock (the audio device is master, or a group member is moved into step) so that a frame due in
    /// an hour is due now wakes the output waiting for it; afterwards it is due.
    func testAClockThatMovesWakesAnOutputSleepingTowardsALaterTime() {
        let (control, clock) = wired()
        clock.start(at: 0)
        let answer = sleeper(control, clock, media: 3600)
        let took = wakeTime(of: answer) { clock.follow(3600, at: Monotonic.now(), tolerance: 0.02) }
        print("wake-on-change (clock moved): \(String(format: "%.2f", took * 1000)) ms")
        XCTAssertTrue(control.sleep(untilDue: 3600, on: clock), "the frame is due once the clock moved to it")
    }

    /// A clock standing still has no due time: the output sleeps until the clock starts, not in steps.
    func testAStartWakesAnOutputWaitingForAStandingClock() {
        let (control, clock) = wired()
        let answer = sleeper(control, clock, media: 0)
        let took = wakeTime(of: answer) { clock.start(at: 0) }
        print("wake-on-change (clock started): \(String(format: "%.2f", took * 1000)) ms")
        XCTAssertTrue(control.sleep(untilDue: 0, on: clock))
    }

    /// A rate change moves every due time: the output waiting for one looks again.
    func testARateChangeWakesAnOutput() {
        let (control, clock) = wired()
        clock.start(at: 0)
        let answer = sleeper(control, clock, media: 3600)
        let took = wakeTime(of: answer) { clock.setRate(2) }
        print("wake-on-change (rate): \(String(format: "%.2f", took * 1000)) ms")
        XCTAssertEqual(answer.withLock { $0 }, false, "not due yet: it only looks again")
    }

    /// A pause and a stop reach a sleeping output through the control.
    func testAPauseAndAStopWakeAnOutput() {
        for mode in [CastMedia.PlaybackControl.Mode.paused, .stopping] {
            let (control, clock) = wired()
            clock.start(at: 0)
            let answer = sleeper(control, clock, media: 3600)
            let took = wakeTime(of: answer) { control.set(mode) }
            print("wake-on-change (\(mode)): \(String(format: "%.2f", took * 1000)) ms")
            XCTAssertEqual(control.status(of: 0), mode == .paused ? .paused : .stopping)
        }
    }

    /// A frame whose time has come is due without sleeping.
    func testAFrameDueAlreadyReturnsAtOnce() {
        let (control, clock) = wired()
        clock.start(at: 10, time: Monotonic.now() - 1_000_000_000)
        XCTAssertTrue(control.sleep(untilDue: 10.5, on: clock))
    }
}
