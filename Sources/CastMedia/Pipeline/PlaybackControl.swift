import Foundation

/// What the user asked of playback, shared by the pipeline's threads: play, pause or stop; the current segment
/// (bumped by every seek); the barrier at which the outputs start each segment together; and the end.
///
/// Threads sleep on it (`sleep(until:)`, `waitWhilePaused(serial:)`, the barriers), so a pause, a seek or a stop
/// wakes them at once.
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

    // Invariant: every stored property below is read and written only while `condition` is locked.
    private let condition = NSCondition()
    private var mode: Mode = .playing
    /// A stall holds the outputs as a pause does, without changing what the user asked for (`mode`).
    private var held = false
    private var segmentNow: Segment
    /// Changes whenever `mode` or the segment changes, so that a sleeper can tell it should look again.
    private var generation = 0
    private var outputs = 0
    /// The start barrier of the segment `arrivalSerial`: who arrived and the first frames they offered.
    private var arrivalSerial = -1
    private var arrivals = 0
    private var firstFrames: [Double] = []
    private var released: (serial: Int, anchor: Double)?
    /// The end barrier of the segment `endSerial`.
    private var endSerial = -1
    private var endArrivals = 0
    private var ended = false
    /// The seek the demux thread has yet to carry out.
    private var pendingSeek: Segment?

    /// A control in the playing mode whose first segment begins at `startTime` (0: where the media begins).
    init(startTime: Double = 0) {
        segmentNow = Segment(serial: 0, target: startTime > 0 ? startTime : nil, exact: true)
    }

    private func changed() {
        generation &+= 1
        condition.broadcast()
    }

    /// Sets how many output threads pass the barriers, once, before they start.
    func expect(outputs count: Int) { condition.withLock { outputs = count } }

    /// The current mode.
    var current: Mode { condition.withLock { mode } }

    /// The current segment.
    var segment: Segment { condition.withLock { segmentNow } }

    /// Changes the mode unless stopping (which is final); returns the mode before.
    @discardableResult
    func set(_ newMode: Mode) -> Mode {
        condition.withLock {
            let old = mode
            if old != .stopping { mode = newMode }
            changed()
            return old
        }
    }

    /// What an output holding a frame of segment `serial` should do now.
    func status(of serial: Int) -> Status {
        condition.withLock { statusLocked(of: serial) }
    }

    private func statusLocked(of serial: Int) -> Status {
        if mode == .stopping { return .stopping }
        if serial != segmentNow.serial { return .superseded }
        return mode == .paused || held ? .paused : .playing
    }

    /// Holds the outputs (a stall: they stand as if paused) or lets them go on; the mode stays what the user set.
    func hold(_ holding: Bool) {
        condition.withLock {
            guard held != holding else { return }
            held = holding
            changed()
        }
    }

    /// Whether a stall holds the outputs.
    var isHeld: Bool { condition.withLock { held } }

    /// Begins a new segment (a seek) and hands it to the demux thread; nil when stopping or after the end.
    /// The caller flushes the queues to the returned serial first (it is the current serial + 1).
    func beginSegment(target: Double, exact: Bool) -> Segment? {
        condition.withLock {
            guard mode != .stopping, !ended else { return nil }
            segmentNow = Segment(serial: segmentNow.serial + 1, target: target, exact: exact)
            pendingSeek = segmentNow
            changed()
            return segmentNow
        }
    }

    /// The seek the demux thread should carry out now, if any (only the latest of several counts).
    func takeSeek() -> Segment? {
        condition.withLock {
            defer { pendingSeek = nil }
            return pendingSeek
        }
    }

    /// For the demux thread at the end of the input: blocks until a seek asks it to read again (returned), or until
    /// playback ended or is being stopped (nil).
    func waitForSeek() -> Segment? {
        condition.withLock {
            while pendingSeek == nil && !ended && mode != .stopping { condition.wait() }
            guard mode != .stopping, !ended else { return nil }
            defer { pendingSeek = nil }
            return pendingSeek
        }
    }

    /// Blocks while paused in segment `serial`; returns the status that ended the wait.
    func waitWhilePaused(serial: Int) -> Status {
        condition.withLock {
            while statusLocked(of: serial) == .paused { condition.wait() }
            return statusLocked(of: serial)
        }
    }

    /// Sleeps until monotonic time `deadline`, at most `limit` seconds, or until the mode or segment changes.
    func sleep(until deadline: UInt64, limit: Double = 0.05) {
        condition.withLock {
            let entered = generation
            let now = Monotonic.now()
            guard deadline > now else { return }
            let seconds = min(Double(deadline - now) / 1e9, limit)
            let wake = Date(timeIntervalSinceNow: seconds)
            while generation == entered && condition.wait(until: wake) {}
        }
    }

    /// The start barrier of segment `serial`: every output calls it once it holds the segment's first frame (or knows
    /// it has none) and offers that frame's media time; it returns when all have. The last to arrive runs `start`
    /// with the segment and the offered times; `start` starts the clock and returns its anchor (nil: the segment was
    /// superseded meanwhile).
    func arrive(
        serial: Int, firstFrameAt time: Double?, thenStart start: (Segment, [Double]) -> Double?
    ) -> Passage {
        condition.lock()
        defer { condition.unlock() }
        guard mode != .stopping else { return .stopping }
        guard serial == segmentNow.serial else { return .superseded }
        if arrivalSerial != serial {
            arrivalSerial = serial
            arrivals = 0
            firstFrames = []
        }
        arrivals += 1
        if let time { firstFrames.append(time) }
        if arrivals == outputs {
            let (segment, times) = (segmentNow, firstFrames)
            condition.unlock()
            let anchor = start(segment, times)
            condition.lock()
            if let anchor, segmentNow.serial == serial { released = (serial, anchor) }
            changed()
        }
        while released?.serial != serial && segmentNow.serial == serial && mode != .stopping { condition.wait() }
        if mode == .stopping { return .stopping }
        guard let released, released.serial == serial else { return .superseded }
        return .passed(anchor: released.anchor)
    }

    /// The end barrier: every output calls it when it has played segment `serial` to its end. Returns `.passed` when
    /// all have (playback is over: later seeks are refused), `.superseded` when a seek came first.
    func arriveAtEnd(serial: Int) -> Passage {
        condition.withLock {
            guard mode != .stopping else { return .stopping }
            guard serial == segmentNow.serial else { return .superseded }
            if endSerial != serial {
                endSerial = serial
                endArrivals = 0
            }
            endArrivals += 1
            if endArrivals == outputs {
                ended = true
                changed()
            }
            while !ended && segmentNow.serial == serial && mode != .stopping { condition.wait() }
            if ended { return .passed(anchor: 0) }
            return mode == .stopping ? .stopping : .superseded
        }
    }
}
