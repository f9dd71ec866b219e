import CastProtocol

/// The load state rules of MPMovieLoadState as a value: measurements in, load state changes out. No clock, no I/O:
/// the player measures (`Measurement`) a few times a second and carries out what `update` returns.
///
/// - `playable`: from probing on (the engine starts as soon as each stream has its first frame), except while
///   stalled.
/// - `playthroughOK`: the whole input is read, or what is buffered plus what arrives at the measured input rate
///   reaches the end without running dry. With `s` the arrival speed (input rate ÷ the media's byte rate, media
///   seconds per second), `ρ` the playback rate, `R` the media seconds to the end and `A` those buffered, the buffer
///   never runs dry iff `A + s·t ≥ ρ·t` until the rest (`R − A`) has arrived, i.e. iff `s·R ≥ ρ·(R − A)`. When the
///   bytes still to arrive are known (`Measurement.bytesLeft`), the rest is those bytes in media seconds (`M`, at the
///   media's average byte rate) rather than `R − A`: what arrived and is no media (an MP4's index read first) is not
///   waited for again, and media whose bytes are not spread evenly (keyframes) is judged by its bytes.
///   It is gained with a reserve and a margin: the rest arrives `Thresholds.playthroughReserve` seconds before it is
///   needed at a rate `Thresholds.playthroughMargin` times the measured one, `s·(R − ρ·c) ≥ m·ρ·(R − A)`, and lost
///   without either, so that a noisy rate does not flap. Both are small (AVPlayer's `likelyToKeepUp` judges with the
///   measured rate): every second of reserve, and every percent of margin, is waited for at the start on a link
///   slower than the film;
///   it is re-evaluated at every measurement and may be lost again. Without a duration or a rate it is only
///   gained once the whole input is read.
/// - `stalled`: while playing (the clock would run), less than `Thresholds.stallBelow` seconds are buffered and
///   the input has not ended: playback is interrupted (load state `[stalled]`). When the input's rate and the
///   media's are known, it ends once playthrough is OK with `Thresholds.refill` seconds buffered (or all that is
///   left), so that on a link slower than the film the one wait lasts until the rest arrives in time, instead of a
///   stall every few seconds (AVPlayer's `likelyToKeepUp`). It also ends once the buffers cannot grow any more
///   (`Measurement.canGrow`: the read-ahead is full, its input failed, or nothing reads while the packets queued
///   are enough): waiting longer would gain nothing, and nothing would be read until playback takes some. Without
///   the rates it ends at `Thresholds.refill` seconds buffered; always when the input ended.
/// - `waitsToStart`: before the clock first runs, a film whose playthrough is judged not OK waits (stalled) until it
///   is, so that on a link slower than the film the one wait comes before the first frame plays, not after it.
/// - `expectedWait`: while stalled, the seconds until the stall should end at the measured rate (what `cast send`
///   shows as "buffering, 14 s").
struct BufferingRule: Sendable, Equatable {
    /// The thresholds, in media seconds.
    struct Thresholds: Sendable, Equatable {
        /// Fewer seconds buffered than this while playing is a stall.
        var stallBelow = 0.1
        /// A stall ends once this much is buffered: with playthrough OK when it can be judged, alone when it cannot.
        var refill = 2.0
        /// `playthroughOK` is gained when `s·(R − ρ·reserve) ≥ margin·ρ·M`, lost when `s·R < ρ·M` (`M`: the media
        /// seconds still to arrive, `missingMedia`).
        /// The margin covers the error of a rate measured over seconds of a steady link (a few percent), the reserve
        /// (seconds) the steps in which bytes arrive (a read of about a quarter second) and the decoding of the last.
        var playthroughMargin = 1.03
        var playthroughReserve = 0.5
    }

    /// What the player measured, at one instant.
    struct Measurement: Sendable, Equatable {
        /// Media seconds buffered ahead of the position (demuxed, plus bytes read but not demuxed yet).
        var ahead: Double
        /// Media seconds from the position to the end; nil when the duration is unknown (a live stream).
        var remaining: Double?
        /// The input's measured delivery rate in bytes per second; nil before it is known.
        var inputRate: Double?
        /// The media's bytes per media second (its size over its duration, or the container's bit rate ÷ 8).
        var mediaByteRate: Double?
        /// The input's bytes still to arrive before the end: from the reading position to the end, less what arrived
        /// there already (an MP4's index at the end, read first; what the read-ahead holds). Nil when unknown (no
        /// size, a stream): then the media time not buffered stands for them, at the media's average byte rate.
        var bytesLeft: Double?
        /// Whether the whole input has been read: nothing more can stall.
        var inputEnded: Bool
        /// Whether playback would advance now (started, playing or stalled, not seeking, not paused by the user).
        var playing: Bool
        /// The playback rate (media seconds per second).
        var rate: Double = 1
        /// Whether waiting can buffer more: false once the read-ahead is full or its input failed (nothing more
        /// arrives until a seek), or, without a read-ahead, while the demux thread waits for the queues to empty.
        var canGrow = true
    }

    /// What changed with a measurement.
    enum Change: Sendable, Equatable {
        /// The load state changed, playback goes on.
        case loadState(LoadState)
        /// The input could not keep up: hold the clock, report `[stalled]` and `interrupted`.
        case stalled
        /// Enough is buffered again: report the new load state and carry on (`playing` unless paused).
        case recovered(LoadState)
    }

    var thresholds = Thresholds()
    /// The load state last reported.
    private(set) var loadState: LoadState = []
    /// Whether playback is stalled now.
    var isStalled: Bool { loadState.contains(.stalled) }

    init(thresholds: Thresholds = Thresholds()) { self.thresholds = thresholds }

    /// The input was opened and probed: playable.
    mutating func probed() -> LoadState {
        loadState = .playable
        return loadState
    }

    /// Playback is about to start (each stream has its first frame, the user wants it playing): whether it should
    /// wait first, as AVPlayer does (`automaticallyWaitsToMinimizeStalling`). It waits when playthrough can be judged
    /// (`isJudged`) and is not OK: the link is slower than the film, so starting now would stall at once and again.
    /// The wait is a stall that began before the clock ran (`[stalled]`, and it ends as a stall does), so the one
    /// wait is at the start. It never waits once the input ended or the buffers cannot grow, nor without the rates
    /// (a stream, a live URL: they start at once and the stall rule covers them).
    mutating func waitsToStart(_ m: Measurement) -> Bool {
        guard !loadState.isEmpty, !isStalled, !m.inputEnded, m.canGrow, isJudged(m), !playthrough(m, had: false)
        else { return false }
        loadState = .stalled
        return true
    }

    /// Ends a stall without waiting for the buffer (a seek starts over); returns the load state to report, nil when
    /// there was no stall.
    mutating func cancelStall(_ measurement: Measurement) -> LoadState? {
        guard isStalled else { return nil }
        loadState = playthrough(measurement, had: false) ? [.playable, .playthroughOK] : .playable
        return loadState
    }

    /// Applies one measurement; returns what changed, or nil.
    mutating func update(_ m: Measurement) -> Change? {
        guard !loadState.isEmpty else { return nil }
        if isStalled {
            let through = playthrough(m, had: false)
            // What arrives comes in steps (a read, an interleaved chunk), so a judgement on a thin buffer is noisy:
            // playthrough ends a stall once the refill is buffered too (or all that is left).
            let refilled = m.ahead >= min(thresholds.refill, m.remaining ?? .infinity)
            guard m.inputEnded || !m.canGrow || refilled && (through || !isJudged(m)) else { return nil }
            loadState = through ? [.playable, .playthroughOK] : .playable
            return .recovered(loadState)
        }
        if m.playing && !m.inputEnded && m.ahead < thresholds.stallBelow {
            loadState = .stalled
            return .stalled
        }
        var next: LoadState = .playable
        if playthrough(m, had: loadState.contains(.playthroughOK)) { next.insert(.playthroughOK) }
        guard next != loadState else { return nil }
        loadState = next
        return .loadState(next)
    }

    /// Whether playthrough can be judged: the time to the end, the input's rate and the media's are known.
    func isJudged(_ m: Measurement) -> Bool {
        m.remaining != nil && m.inputRate != nil && (m.mediaByteRate ?? 0) > 0
    }

    /// While stalled, the seconds until the stall should end: until playthrough is OK with the refill buffered, at
    /// the measured input rate, or until the refill is buffered when playthrough cannot be judged (then nil when
    /// the rates are unknown). Nil when not stalled, or when nothing arrives.
    func expectedWait(_ m: Measurement) -> Double? {
        guard isStalled, !m.inputEnded, m.canGrow, let rate = m.inputRate, let byteRate = m.mediaByteRate,
            byteRate > 0, rate > 0
        else { return nil }
        // Media seconds that arrive each second.
        let speed = rate / byteRate
        // Until the refill is buffered ...
        var wait = max(min(thresholds.refill, m.remaining ?? .infinity) - max(m.ahead, 0), 0) / speed
        if let remaining = m.remaining, let missing = missingMedia(m) {
            // ... and until playthrough (with its reserve and margin) holds: what is still missing, M, falls to
            // s·(R − ρ·reserve) ÷ (margin·ρ), at s media seconds a second.
            let rate = max(m.rate, 0.01)
            let arriving = speed * max(remaining - rate * thresholds.playthroughReserve, 0)
            wait = max(wait, (missing - arriving / (thresholds.playthroughMargin * rate)) / speed)
        }
        return wait
    }

    /// The media time up to which every played stream is demuxed, from how far each one is: the stream read least
    /// far limits playback, unless it lags the furthest by more than any interleaving does (`streamEndLag`): then it
    /// has ended (an audio track shorter than the video) and no longer counts. Nil before anything was demuxed.
    static func demuxedUpTo(_ streams: [Double]) -> Double? {
        guard let furthest = streams.max() else { return nil }
        return streams.filter { furthest - $0 <= streamEndLag }.min()
    }

    /// Seconds by which a stream may lag another before it counts as ended.
    static let streamEndLag = 5.0

    /// Whether playback reaches the end without running dry (see the type's comment); `had`: whether it did at the
    /// last measurement (no margin to keep it).
    func playthrough(_ m: Measurement, had: Bool) -> Bool {
        if m.inputEnded { return true }
        guard let remaining = m.remaining, let rate = m.inputRate, let byteRate = m.mediaByteRate,
            let missing = missingMedia(m)
        else { return false }
        if missing <= 0 { return true }
        let speed = rate / byteRate
        let playback = max(m.rate, 0.01)
        if had { return speed * remaining >= playback * missing }
        let arriving = speed * max(remaining - playback * thresholds.playthroughReserve, 0)
        return arriving >= thresholds.playthroughMargin * playback * missing
    }

    /// The media seconds still to arrive (`M`), at the media's average byte rate: the bytes left over it when they are
    /// known, the media time not buffered otherwise (`R − A`). The bytes left are what must cross the link before the
    /// end, the index read first and every byte held left out; `R − A` counts as still to come the bytes that arrived
    /// and are no media (the index), and misjudges media whose bytes are not spread evenly (heavy keyframes first: the
    /// wait on a slow link ended late). Nil without a duration or a media byte rate.
    func missingMedia(_ m: Measurement) -> Double? {
        guard let remaining = m.remaining, let byteRate = m.mediaByteRate, byteRate > 0 else { return nil }
        if let left = m.bytesLeft { return min(max(left, 0) / byteRate, remaining) }
        return remaining - min(max(m.ahead, 0), remaining)
    }
}
