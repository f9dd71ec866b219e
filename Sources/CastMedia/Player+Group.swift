import CastProtocol

/// Where a group's timeline began for this member: the media time and the instant of its last scheduled resume, and
/// the first alignment since (the start of the baseline over which its clock's rate against the group's is measured).
struct GroupAlignment {
    var media: Double
    var time: UInt64
    var first: (elapsed: Double, at: UInt64)?
    /// The last believable rate of this box's clock against the group's (1: none measured yet).
    var ratio = 1.0

    init(media: Double, time: UInt64) {
        self.media = media
        self.time = time
    }

    /// The trim of the clock's rate for an alignment that found the position `error` seconds ahead of the group's
    /// timeline, `elapsed` group seconds after the resume, at `instant` (ns): the rate of this box's clock against the
    /// group's (measured from the first alignment on, over at least `Player.alignBaseline`), and the error made up over
    /// `Player.alignSettle`, within ±`Player.maximumTrim`. `held` when the correction wanted was out of range: a
    /// measured rate beyond `Player.maximumRatio` (a bad window of alignments, not a clock: the last good one is
    /// kept), or a trim beyond the limit (held at it). Pure: tested in GroupAlignmentTests.
    mutating func trim(error: Double, elapsed: Double, at instant: UInt64) -> (trim: Double, held: Bool) {
        var held = false
        if let first {
            if instant > first.at + UInt64(Player.alignBaseline * 1e9) {
                let measured = (elapsed - first.elapsed) / (Double(instant - first.at) / 1e9)
                if abs(measured - 1) <= Player.maximumRatio {
                    ratio = measured
                } else {
                    held = true
                }
            }
        } else {
            first = (elapsed, instant)
        }
        let wanted = ratio * (1 - error / Player.alignSettle)
        guard wanted.isFinite else { return (ratio, true) }
        let trim = min(max(wanted, 1 - Player.maximumTrim), 1 + Player.maximumTrim)
        return (trim, held || trim != wanted)
    }
}

extension Player {
    /// How far a member may be from the group before it jumps rather than slews: 50 ms.
    static let alignJump = 0.05
    /// How long a member takes to make up an error by trimming its rate: 2 s.
    static let alignSettle = 2.0
    /// The largest trim of the rate: ±0.1 % (1000 ppm, ten times a poor crystal's error).
    static let maximumTrim = 0.001
    /// The shortest baseline a rate against the group's is measured over: 3 s (over less, a millisecond of jitter in
    /// the instants a member is told is hundreds of ppm).
    static let alignBaseline = 3.0
    /// The largest believable rate of a box's clock against the group's: ±500 ppm (crystals are within a few tens);
    /// a measured rate beyond it is a bad window of alignments, not a clock, and the last good one is held.
    static let maximumRatio = 0.0005

    /// Starts or resumes the clock (`start` does, at the time it is given): now, or the instant of a scheduled resume
    /// still ahead (at most `maximumScheduleAhead` from now), used once. A scheduled one begins the group's timeline
    /// for this member (`align`) and is reported (`scheduledStart`, with the instant it was given here). Call inside
    /// the monitor, with its state.
    func startClock(_ state: inout State, _ start: (UInt64) -> Void) {
        let now = Monotonic.now()
        defer { state.resumeAt = nil }
        guard let instant = state.resumeAt, instant > now else { return start(now) }
        let time = min(instant, now + UInt64(CastProtocol.PlaybackControl.maximumScheduleAhead))
        start(time)
        let position = clock.position(at: time)
        state.alignment = GroupAlignment(media: position, time: time)
        emit(.scheduledStart(at: Int64(time), position: position))
    }

    /// Anchors the group's timeline for this member where it plays now (the `anchor` control: a receiver that plays
    /// alone becomes a member of a group without stopping, docs/multiroom.md): the instant now of its clock
    /// (CLOCK_MONOTONIC, the clock `align` and a scheduled resume use) and the position its clock gives for that
    /// instant, as if a scheduled resume had started it there. Its `align`s count from it from now on (a new baseline
    /// for the rate), and it is reported as a scheduled start is (`scheduledStart`). Nothing is reported while the
    /// clock stands (paused, seeking, stalled, before its start, a scheduled resume still ahead): the sender then
    /// falls back to pausing and resuming it in step. Nor while it follows a timeline already (a group's scheduled
    /// start, an earlier anchor): another anchor would move its origin under the group's `align`s, which any paired
    /// sender could otherwise do to a group's member. Call from any thread.
    func anchor() {
        shared.withLock { state in
            guard control.current == .playing, state.clockStarted, clock.isRunning, !state.seeking,
                !state.buffering.rule.isStalled, state.resumeAt == nil, state.alignment == nil
            else { return }
            let now = Monotonic.now()
            let position = clock.position(at: now)
            guard position.isFinite, position >= 0 else { return }
            state.alignment = GroupAlignment(media: position, time: now)
            emit(.scheduledStart(at: Int64(now), position: position))
        }
    }

    /// Keeps this member in step with its group: at `instant` (CLOCK_MONOTONIC ns) `elapsed` seconds of the group's
    /// clock will have passed since the scheduled resume that began its timeline, so the position should then be where
    /// the timeline began plus `elapsed` × the rate. The clock's rate is trimmed by the rate of this box's clock
    /// against the group's (measured from the first alignment on), and by the error over `alignSettle`, within
    /// ±`maximumTrim`; an error over `alignJump` (a member that fell behind) moves the clock at once. A correction out
    /// of range is a rule of the group, not a failure: a rate beyond `maximumRatio` is not believed (the last good one
    /// is held), a trim beyond the limit is held at it, and the `sync` event says so (`limited`).
    ///
    /// The clock paces the outputs the engine paces (video, and sound on a PCM that takes what it is given, such as
    /// ALSA's null and file PCMs). A sound card paces itself: the audio output keeps it on this clock by resampling
    /// (`DriftCompensation`), and the `sync` event then reports the card's offset and correction (docs/multiroom.md).
    public func align(elapsed: Double, at instant: UInt64) {
        // An instant further than a scheduled action may be from now cannot be "now" on the sender's side: a broken
        // estimate, not a correction (dropped, as a late one is).
        let now = Monotonic.now()
        let reach = UInt64(CastProtocol.PlaybackControl.maximumScheduleAhead)
        guard (instant > now ? instant - now : now - instant) < reach else { return }
        shared.withLock { state in
            guard var alignment = state.alignment, control.current == .playing, clock.isRunning, !state.seeking,
                !state.buffering.rule.isStalled, instant > alignment.time
            else { return }
            let expected = alignment.media + elapsed * clock.rate
            let error = clock.position(at: instant) - expected
            if abs(error) > Self.alignJump {
                clock.follow(expected, at: instant, tolerance: 0)
                clock.setTrim(1)
                alignment.first = nil
                state.alignment = alignment
                emit(.sync(clampingOffset: error, trim: 0, limited: false))
                return
            }
            let (trim, held) = alignment.trim(error: error, elapsed: elapsed, at: instant)
            clock.setTrim(trim)
            state.alignment = alignment
            if let drift = state.deviceDrift {
                emit(.sync(clampingOffset: error + (drift.offset ?? 0), trim: drift.ppm, limited: held))
            } else {
                emit(.sync(clampingOffset: error, trim: (trim - 1) * 1e6, limited: held))
            }
        }
    }

    /// The instant the group's timeline began for this member (its last scheduled resume, CLOCK_MONOTONIC ns), or nil
    /// when it follows none: what a self-paced audio device is kept in step for.
    var groupStart: UInt64? { shared.withLock { state in state.alignment?.time } }

    /// The audio output's report of a self-paced device's drift (nil: none measured), for the next `sync` event.
    func noteDeviceDrift(offset: Double?, ppm: Double?) {
        shared.withLock { state in state.deviceDrift = ppm.map { (offset, $0) } }
    }
}
