import CastProtocol

/// Where a group's timeline began for this member: the media time and the instant of its last scheduled resume, and
/// the first alignment since (the start of the baseline over which its clock's rate against the group's is measured).
struct GroupAlignment {
    var media: Double
    var time: UInt64
    var first: (elapsed: Double, at: UInt64)?
}

extension Player {
    /// How far a member may be from the group before it jumps rather than slews: 50 ms.
    static let alignJump = 0.05
    /// How long a member takes to make up an error by trimming its rate: 2 s.
    static let alignSettle = 2.0
    /// The largest trim of the rate: ±0.1 % (1000 ppm, ten times a poor crystal's error).
    static let maximumTrim = 0.001

    /// Starts or resumes the clock (`start` does, at the time it is given): now, or the instant of a scheduled resume
    /// still ahead (at most `maximumScheduleAhead` from now), used once. A scheduled one begins the group's timeline
    /// for this member (`align`). Call inside the monitor, with its state.
    func startClock(_ state: inout State, _ start: (UInt64) -> Void) {
        let now = Monotonic.now()
        defer { state.resumeAt = nil }
        guard let instant = state.resumeAt, instant > now else { return start(now) }
        let time = min(instant, now + UInt64(CastProtocol.PlaybackControl.maximumScheduleAhead))
        start(time)
        state.alignment = GroupAlignment(media: clock.position(at: time), time: time)
    }

    /// Keeps this member in step with its group: at `instant` (CLOCK_MONOTONIC ns) `elapsed` seconds of the group's
    /// clock will have passed since the scheduled resume that began its timeline, so the position should then be where
    /// the timeline began plus `elapsed` × the rate. The clock's rate is trimmed by the rate of this box's clock
    /// against the group's (measured from the first alignment on), and by the error over `alignSettle`, within
    /// ±`maximumTrim`; an error over `alignJump` (a member that fell behind) moves the clock at once.
    ///
    /// The clock paces the outputs the engine paces (video, and sound on a PCM that takes what it is given, such as
    /// ALSA's null and file PCMs). A sound card paces itself: the audio output keeps it on this clock by resampling
    /// (`DriftCompensation`), and the `sync` event then reports the card's offset and correction (docs/multiroom.md).
    public func align(elapsed: Double, at instant: UInt64) {
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
                emit(.sync(offset: error, trim: 0))
                return
            }
            var ratio = 1.0
            if let first = alignment.first {
                if instant > first.at + 1_000_000_000 {
                    ratio = (elapsed - first.elapsed) / (Double(instant - first.at) / 1e9)
                }
            } else {
                alignment.first = (elapsed, instant)
            }
            let trim = min(max(ratio * (1 - error / Self.alignSettle), 1 - Self.maximumTrim), 1 + Self.maximumTrim)
            clock.setTrim(trim)
            state.alignment = alignment
            if let drift = state.deviceDrift {
                emit(.sync(offset: error + (drift.offset ?? 0), trim: drift.ppm))
            } else {
                emit(.sync(offset: error, trim: (trim - 1) * 1e6))
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
