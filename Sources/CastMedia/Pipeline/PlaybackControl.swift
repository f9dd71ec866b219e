import Foundation

/// What the user asked of playback, shared by the output threads: play, pause or stop; plus the start barrier.
///
/// Output threads sleep on it (`sleep(until:)`, `waitWhilePaused()`), so a pause or stop wakes them at once.
final class PlaybackControl: @unchecked Sendable {
    /// What the outputs should be doing.
    enum Mode: Sendable, Equatable {
        /// Presenting against the clock.
        case playing
        /// Holding still; the clock stands.
        case paused
        /// Leaving: every thread returns as soon as it can.
        case stopping
    }

    // Invariant: `mode`, `waiting` and `released` are read and written only while `condition` is locked.
    private let condition = NSCondition()
    private var mode: Mode = .playing
    private var waiting = 0
    private var released = false

    /// Sets how many output threads will pass the start barrier, once, before they start.
    func expect(outputs: Int) { condition.withLock { waiting = outputs } }

    /// The current mode.
    var current: Mode { condition.withLock { mode } }

    /// Changes the mode unless stopping (which is final); returns the mode before.
    @discardableResult
    func set(_ newMode: Mode) -> Mode {
        condition.withLock {
            let old = mode
            if old != .stopping { mode = newMode }
            condition.broadcast()
            return old
        }
    }

    /// Blocks while paused; returns false when stopping.
    func waitWhilePaused() -> Bool {
        condition.withLock {
            while mode == .paused { condition.wait() }
            return mode == .playing
        }
    }

    /// Sleeps until monotonic time `deadline`, at most `limit` seconds, or until the mode changes.
    /// Returns the mode when it woke.
    @discardableResult
    func sleep(until deadline: UInt64, limit: Double = 0.05) -> Mode {
        condition.withLock {
            let entered = mode
            let now = Monotonic.now()
            guard deadline > now else { return mode }
            let seconds = min(Double(deadline - now) / 1e9, limit)
            let wake = Date(timeIntervalSinceNow: seconds)
            while mode == entered && condition.wait(until: wake) {}
            return mode
        }
    }

    /// The start barrier: every output thread calls it once it holds its first frame (or knows it has none) and
    /// returns when all have; the last one to arrive runs `start` first. False when stopping.
    func arrive(thenStart start: () -> Void) -> Bool {
        condition.lock()
        waiting -= 1
        if waiting == 0 {
            condition.unlock()
            start()
            condition.lock()
            released = true
            condition.broadcast()
        }
        while !released && mode != .stopping { condition.wait() }
        let proceed = mode != .stopping
        condition.unlock()
        return proceed
    }
}
