import CastBase
import CastProtocol
import Foundation
import Synchronization

/// The monotonic clock, in nanoseconds: CLOCK_MONOTONIC itself (`MonotonicClock`, the clock exchange's), because a
/// group's scheduled instants (`PlaybackControl.Action.resumeAt`, `.align`) are given in it; it never jumps.
enum Monotonic {
    /// Now, in nanoseconds.
    static func now() -> UInt64 { UInt64(max(MonotonicClock.nanoseconds(), 0)) }
}

/// The media clock: which media time is presented at which monotonic time.
///
/// It is an anchor, "media time M at monotonic time T", plus a running flag, so it can answer both ways:
/// the position now, and when a given sample or frame is due ("sample N at monotonic time T"). The audio output
/// re-anchors it when the device paces playback (the audio clock is master); otherwise it runs on the monotonic
/// clock. A network clock can later move the anchor the same way.
///
/// Every change (start, pause, resume, rate, trim, a re-anchoring that moves it) calls `onChange` once the new anchor
/// is in place, outside the lock: the player wakes the outputs that sleep towards a due time with it
/// (`PlaybackControl.sleep(untilDue:on:)`), so that they look at the clock again at once instead of on a timer.
///
/// Thread-safety: every method may be called from any thread.
final class PlaybackClock: Sendable {
    /// The anchor and the counters, in one `Mutex`.
    private struct State {
        var anchorMedia: Double
        var anchorTime: UInt64 = 0
        var running = false
        /// Media seconds per second (the playback rate).
        var speed = 1.0
        /// A group member's trim of its rate (1 ± 0.001, `setTrim`): the clock runs at speed × trim, so that it
        /// follows the group's clock however fast this box's runs.
        var trim = 1.0
        /// Media seconds played while the clock ran, up to `countedUntil` (the access log's duration watched).
        var watched = 0.0
        var countedUntil: UInt64 = 0

        /// Before a start scheduled ahead (`start(at:time:)`, `resume(time:)` with a later time) the clock stands at
        /// its anchor.
        func position(at now: UInt64) -> Double {
            guard running, now > anchorTime else { return anchorMedia }
            return anchorMedia + Double(Int64(bitPattern: now &- anchorTime)) / 1e9 * speed * trim
        }

        /// Adds the time run since `countedUntil` to `watched`, before `running` or `speed` change.
        mutating func count(until time: UInt64) {
            if running { watched += max(Double(Int64(bitPattern: time &- countedUntil)) / 1e9, 0) * speed * trim }
            countedUntil = time
        }

        /// Re-anchors at `time` where the clock is then.
        mutating func reanchor(at time: UInt64) {
            count(until: time)
            anchorMedia = position(at: time)
            anchorTime = time
        }
    }

    private let state: Mutex<State>
    private let onChange: @Sendable () -> Void

    /// A stopped clock at media time `position`; `onChange` runs after every change (on the changing thread).
    init(position: Double = 0, onChange: @escaping @Sendable () -> Void = {}) {
        state = Mutex(State(anchorMedia: position))
        self.onChange = onChange
    }

    /// The media time at monotonic time `now`.
    func position(at now: UInt64 = Monotonic.now()) -> Double {
        state.withLock { $0.position(at: now) }
    }

    /// The monotonic time at which media time `media` is due; nil while the clock stands still.
    func dueTime(of media: Double) -> UInt64? {
        state.withLock { state in
            guard state.running else { return nil }
            let offset = (media - state.anchorMedia) / (state.speed * state.trim) * 1e9
            return offset <= 0
                ? state.anchorTime &- UInt64(min(-offset, Double(state.anchorTime)))
                : state.anchorTime &+ UInt64(offset)
        }
    }

    /// Whether the clock runs.
    var isRunning: Bool { state.withLock { $0.running } }

    /// Media seconds played so far: the time the clock ran, times its rate (seeks and stalls do not count).
    func played(at now: UInt64 = Monotonic.now()) -> Double {
        state.withLock { state in
            state.watched
                + (state.running
                    ? max(Double(Int64(bitPattern: now &- state.countedUntil)) / 1e9, 0) * state.speed * state.trim : 0)
        }
    }

    /// Starts (or restarts) the clock: media time `position` is presented at monotonic time `time`, which may be
    /// ahead (a scheduled start: the position stands until then).
    func start(at position: Double, time: UInt64 = Monotonic.now()) {
        state.withLock { state in
            state.count(until: time)
            state.anchorMedia = position
            state.anchorTime = time
            state.running = true
        }
        onChange()
    }

    /// Stops the clock where it is now, or at `position` when given.
    func pause(at position: Double? = nil, time: UInt64 = Monotonic.now()) {
        state.withLock { state in
            state.count(until: time)
            state.anchorMedia = position ?? state.position(at: time)
            state.running = false
        }
        onChange()
    }

    /// Resumes a paused clock from where it stood, at `time` (ahead: a scheduled resume).
    func resume(time: UInt64 = Monotonic.now()) {
        let resumed = state.withLock { state in
            guard !state.running else { return false }
            state.countedUntil = time
            state.anchorTime = time
            state.running = true
            return true
        }
        if resumed { onChange() }
    }

    /// The rate: media seconds per second.
    var rate: Double { state.withLock { $0.speed } }

    /// Changes the rate from `time` on, keeping the media time at `time`.
    func setRate(_ rate: Double, time: UInt64 = Monotonic.now()) {
        state.withLock { state in
            state.reanchor(at: time)
            state.speed = rate
        }
        onChange()
    }

    /// Runs the clock at `trim` × its rate from `time` on, keeping the media time at `time` (a group member keeping
    /// in step, `Player.align`).
    func setTrim(_ trim: Double, time: UInt64 = Monotonic.now()) {
        state.withLock { state in
            state.reanchor(at: time)
            state.trim = trim
        }
        onChange()
    }

    /// Moves a running clock so that `position` is the media time at `time`, when it is more than `tolerance`
    /// seconds away from it (the audio device is the master).
    func follow(_ position: Double, at time: UInt64, tolerance: Double) {
        let moved = state.withLock { state in
            guard state.running, abs(state.position(at: time) - position) > tolerance else { return false }
            state.anchorMedia = position
            state.anchorTime = time
            return true
        }
        if moved { onChange() }
    }
}
