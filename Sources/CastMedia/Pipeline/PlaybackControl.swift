import CastBase
import CastProtocol
import Foundation

/// What the user asked of playback, shared by the pipeline's threads: play, pause or stop; the current segment
/// (bumped by every seek); the barrier at which the outputs start each segment together; and the end.
///
/// Threads sleep on it (`sleep(untilDue:on:)`, `waitWhilePaused(serial:)`, the barriers), so a pause, a seek, a
/// stall, a stop or a change of the clock wakes them at once; what is only looked at (the mode, the segment, a
/// status: the position timer and the buffering check ask several times a second) wakes nobody (`Monitor.read`).
final class PlaybackControl: Sendable {
    /// What the outputs should be doing.
    enum Mode: Sendable, Equatable {
        /// Presenting against the clock.
        case playing
        /// Holding still; the clock stands.
        case paused
        /// Leaving: every thread returns as soon as it can.
        case stopping
    }

    /// One stretch of playback between seeks (ffplay's serial, with what the seek asked for).
    struct Segment: Sendable, Equatable {
        /// 0 for the stretch that begins at start-up; every seek adds one. Stages drop what carries another.
        var serial: Int
        /// Where the segment begins, in media seconds; nil: where the media begins.
        var target: Double?
        /// Exact: frames that end before `target` are decoded but not presented, and audio is trimmed to it.
        /// Otherwise the segment begins with the key frame at or before `target`.
        var exact: Bool
    }

    /// What an output thread should do with the segment it holds, asked with the segment's serial.
    enum Status: Sendable, Equatable {
        /// Present against the clock.
        case playing
        /// Hold still: paused by the user, or held by a stall.
        case paused
        /// A seek began a newer segment: drop what is held and take up the new one.
        case superseded
        /// Leave.
        case stopping
    }

    /// How a barrier was left.
    enum Passage: Sendable, Equatable {
        /// Every output arrived; `anchor` is the media time at which the segment's clock started (start barrier).
        case passed(anchor: Double)
        /// A seek began a newer segment while waiting.
        case superseded
        /// Playback is being stopped.
        case stopping
    }

    /// Everything the threads share, in `state`.
    private struct State {
        var mode: Mode = .playing
        /// A stall holds the outputs as a pause does, without changing what the user asked for (`mode`).
        var held = false
        var segmentNow: Segment
        /// Changes whenever `mode` or the segment changes, so that a sleeper can tell it should look again.
        var generation = 0
        var outputs = 0
        /// The start barrier of the segment `arrivalSerial`: who arrived and the first frames they offered.
        var arrivalSerial = -1
        var arrivals = 0
        var firstFrames: [Double] = []
        var released: (serial: Int, anchor: Double)?
        /// The end barrier of the segment `endSerial`.
        var endSerial = -1
        var endArrivals = 0
        var ended = false
        /// The seek the demux thread has yet to carry out.
        var pendingSeek: Segment?

        mutating func changed() { generation &+= 1 }

        func status(of serial: Int) -> Status {
            if mode == .stopping { return .stopping }
            if serial != segmentNow.serial { return .superseded }
            return mode == .paused || held ? .paused : .playing
        }
    }

    private let state: Monitor<State>

    /// A control in the playing mode whose first segment begins at `startTime` (0: where the media begins).
    init(startTime: Double = 0) {
        state = Monitor(State(segmentNow: Segment(serial: 0, target: startTime > 0 ? startTime : nil, exact: true)))
    }

    /// Sets how many output threads pass the barriers, once, before they start.
    func expect(outputs count: Int) { state.withLock { $0.outputs = count } }

    /// The current mode.
    var current: Mode { state.read { $0.mode } }

    /// The current segment.
    var segment: Segment { state.read { $0.segmentNow } }

    /// Changes the mode unless stopping (which is final); returns the mode before.
    @discardableResult
    func set(_ newMode: Mode) -> Mode {
        state.withLock { state in
            let old = state.mode
            if old != .stopping { state.mode = newMode }
            state.changed()
            return old
        }
    }

    /// What an output holding a frame of segment `serial` should do now.
    func status(of serial: Int) -> Status {
        state.read { $0.status(of: serial) }
    }

    /// Holds the outputs (a stall: they stand as if paused) or lets them go on; the mode stays what the user set.
    func hold(_ holding: Bool) {
        state.withLock { state in
            guard state.held != holding else { return }
            state.held = holding
            state.changed()
        }
    }

    /// Whether a stall holds the outputs.
    var isHeld: Bool { state.read { $0.held } }

    /// Begins a new segment (a seek) and hands it to the demux thread; nil when stopping or after the end.
    /// The caller flushes the queues to the returned serial first (it is the current serial + 1).
    func beginSegment(target: Double, exact: Bool) -> Segment? {
        state.withLock { state in
            guard state.mode != .stopping, !state.ended else { return nil }
            state.segmentNow = Segment(serial: state.segmentNow.serial + 1, target: target, exact: exact)
            state.pendingSeek = state.segmentNow
            state.changed()
            return state.segmentNow
        }
    }

    /// The seek the demux thread should carry out now, if any (only the latest of several counts).
    func takeSeek() -> Segment? {
        state.withLock { state in
            defer { state.pendingSeek = nil }
            return state.pendingSeek
        }
    }

    /// For the demux thread at the end of the input: blocks until a seek asks it to read again (returned), or until
    /// playback ended or is being stopped (nil).
    func waitForSeek() -> Segment? {
        state.withLock(when: { $0.pendingSeek != nil || $0.ended || $0.mode == .stopping }) { state in
            guard state.mode != .stopping, !state.ended else { return nil }
            defer { state.pendingSeek = nil }
            return state.pendingSeek
        }
    }

    /// Blocks while paused in segment `serial`; returns the status that ended the wait.
    func waitWhilePaused(serial: Int) -> Status {
        state.withLock(when: { $0.status(of: serial) != .paused }) { $0.status(of: serial) }
    }

    /// Blocks while segment `serial` is playing or paused (a still picture on screen); returns the status that ended
    /// the wait: stopping or superseded.
    func waitWhileShowing(serial: Int) -> Status {
        state.withLock(when: { [.stopping, .superseded].contains($0.status(of: serial)) }) { $0.status(of: serial) }
    }

    /// Wakes the sleepers of `sleep(untilDue:on:)`: the clock they sleep towards changed (the player's
    /// `PlaybackClock` calls it on every change).
    func clockChanged() { state.withLock { $0.changed() } }

    /// Sleeps until media time `media` is due on `clock`, or until the mode, the segment, a stall or the clock changes,
    /// whichever comes first: no timer, every change wakes the sleeper (a clock standing still has no due time, and
    /// then only a change does). Returns whether `media` is due; false: look at `status(of:)` and ask again.
    func sleep(untilDue media: Double, on clock: PlaybackClock) -> Bool {
        // The generation is read before the clock, so that a change made after the clock was read is seen below.
        let entered = state.read { $0.generation }
        let due = clock.dueTime(of: media)
        let now = Monotonic.now()
        if let due, now >= due { return true }
        let seconds = due.map { Double($0 - now) / 1e9 }
        state.wait(until: { $0.generation != entered }, timeout: seconds)
        return false
    }

    /// The start barrier of segment `serial`: every output calls it once it holds the segment's first frame (or knows
    /// it has none) and offers that frame's media time; it returns when all have. The last to arrive runs `start`
    /// with the segment and the offered times (outside the monitor); `start` starts the clock and returns its anchor
    /// (nil: the segment was superseded meanwhile).
    func arrive(
        serial: Int, firstFrameAt time: Double?, thenStart start: (Segment, [Double]) -> Double?
    ) -> Passage {
        let arrival = state.withLock { state -> (Segment, [Double])?? in
            guard state.mode != .stopping, serial == state.segmentNow.serial else { return nil }
            if state.arrivalSerial != serial {
                state.arrivalSerial = serial
                state.arrivals = 0
                state.firstFrames = []
            }
            state.arrivals += 1
            if let time { state.firstFrames.append(time) }
            return state.arrivals == state.outputs ? .some((state.segmentNow, state.firstFrames)) : .some(nil)
        }
        guard let arrival else { return state.withLock { $0.mode == .stopping ? .stopping : .superseded } }
        if let (segment, times) = arrival {
            let anchor = start(segment, times)
            state.withLock { state in
                if let anchor, state.segmentNow.serial == serial { state.released = (serial, anchor) }
                state.changed()
            }
        }
        let leave = { (state: State) in
            state.released?.serial == serial || state.segmentNow.serial != serial || state.mode == .stopping
        }
        return state.withLock(when: leave) { state in
            if state.mode == .stopping { return .stopping }
            guard let released = state.released, released.serial == serial else { return .superseded }
            return .passed(anchor: released.anchor)
        }
    }

    /// The end barrier: every output calls it when it has played segment `serial` to its end. Returns `.passed` when
    /// all have (playback is over: later seeks are refused), `.superseded` when a seek came first.
    func arriveAtEnd(serial: Int) -> Passage {
        let arrived = state.withLock { state -> Passage? in
            guard state.mode != .stopping else { return .stopping }
            guard serial == state.segmentNow.serial else { return .superseded }
            if state.endSerial != serial {
                state.endSerial = serial
                state.endArrivals = 0
            }
            state.endArrivals += 1
            if state.endArrivals == state.outputs {
                state.ended = true
                state.changed()
            }
            return nil
        }
        if let arrived { return arrived }
        let leave = { (state: State) in state.ended || state.segmentNow.serial != serial || state.mode == .stopping }
        return state.withLock(when: leave) { state in
            if state.ended { return .passed(anchor: 0) }
            return state.mode == .stopping ? .stopping : .superseded
        }
    }
}
