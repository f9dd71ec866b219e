import CastProtocol
import Foundation

/// The player's buffering bookkeeping: what the demux thread has read, the input rate when FFmpeg reads the input
/// itself, the load state rule and the stalls. Guarded by `Player.lock`.
struct BufferingState {
    var rule = BufferingRule()
    /// Measures a few times a second on its own queue; cancelled at the finish.
    var monitor: (any DispatchSourceTimer)?
    /// The input's size in bytes, when known.
    var size: Int64?
    /// The media's bytes per media second, when known.
    var byteRate: Double?
    /// The media time (seconds) up to which each played stream was demuxed in the current segment.
    var demuxedUpTo: [Int32: Double] = [:]
    /// The demux thread read the whole input (in the current segment).
    var inputEnded = false
    /// For an input FFmpeg reads itself (no `ReadAheadSource`): its bytes over the time spent in reads.
    var readMeter = RateMeter(window: 2)
    /// When the demux thread's read in progress began (monotonic ns), nil between reads.
    var readStarted: UInt64?
    /// Bytes FFmpeg's AVIOContext read so far (its `bytes_read`).
    var bytesRead: Int64 = 0
    /// Stalls so far, and their time: the one in progress began at `stallBegan` (monotonic ns).
    var stalls = 0
    var stallSeconds = 0.0
    var stallBegan: UInt64?
    /// The `buffered` event last sent, and when (monotonic ns).
    var reported: (playable: Double, ahead: Double, wait: Double?, at: UInt64)?
    /// The demux thread's packet budget, once the pipeline runs: without a read-ahead, a full budget means that
    /// nothing more is read.
    var budget: PacketBudget?
}

extension Player {
    /// How often the buffer is measured, and the least time between two `buffered` events.
    static let bufferingInterval = DispatchTimeInterval.milliseconds(100)
    static let bufferedEventInterval: UInt64 = 500_000_000

    /// The source, when it reads ahead on its own thread (the receiver's media connection).
    var readAhead: ReadAheadSource? { source as? ReadAheadSource }

    /// The demux thread opened and probed the input: reports `playable`, judges playthrough at once, and starts the
    /// measurements.
    func beginBuffering(size: Int64?, duration: Double?, bitRate: Int64, bytesRead: Int64, openedIn seconds: Double) {
        let monitor = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "CastMedia.Player.buffering"))
        shared.withLock { state in
            state.buffering.size = size
            if let size, let duration, duration > 0 {
                state.buffering.byteRate = Double(size) / duration
            } else if bitRate > 0 {
                state.buffering.byteRate = Double(bitRate) / 8
            }
            // Opening and probing read the input: the first sample of its rate. The read-ahead's reads grow now.
            readAhead?.probed()
            state.buffering.bytesRead = bytesRead
            if readAhead == nil { state.buffering.readMeter.record(bytes: Int(bytesRead), duration: seconds) }
            emit(.loadState(state.buffering.rule.probed()))
            state.buffering.monitor = monitor
        }
        checkBuffering()
        monitor.schedule(
            deadline: .now() + Self.bufferingInterval, repeating: Self.bufferingInterval, leeway: .milliseconds(10))
        monitor.setEventHandler { [weak self] in self?.checkBuffering() }
        monitor.resume()
    }

    /// The demux thread is about to read (FFmpeg reads the input itself): the reading time starts.
    func willRead() {
        shared.withLock { state in state.buffering.readStarted = Monotonic.now() }
    }

    /// The demux thread read; `bytesRead` is the AVIOContext's total so far.
    func didRead(bytesRead: Int64) {
        let now = Monotonic.now()
        shared.withLock { state in
            let started = state.buffering.readStarted ?? now
            state.buffering.readStarted = nil
            let delta = max(bytesRead - state.buffering.bytesRead, 0)
            state.buffering.bytesRead = max(bytesRead, state.buffering.bytesRead)
            if readAhead == nil {
                state.buffering.readMeter.record(bytes: Int(delta), duration: Double(now - started) / 1e9)
            }
        }
    }

    /// A packet of `stream` reaching media time `seconds` (its end) was demuxed.
    func demuxed(stream: Int32, upTo seconds: Double) {
        shared.withLock { state in
            state.buffering.demuxedUpTo[stream] = max(state.buffering.demuxedUpTo[stream] ?? -.infinity, seconds)
        }
    }

    /// The demux thread reached the end of the input (true), or a seek made it read again (false; what was
    /// demuxed for the old position no longer counts).
    func inputEnded(_ ended: Bool) {
        shared.withLock { state in
            state.buffering.inputEnded = ended
            if !ended { state.buffering.demuxedUpTo.removeAll() }
        }
    }

    /// One measurement: applies the buffering rule and carries out what it says (hold or release the clock, the
    /// events), and sends `buffered` when it changed. Runs on the monitor's queue; the events are emitted under
    /// `lock`, so that they keep their order with pause, resume and seek.
    func checkBuffering() {
        shared.withLock { state in
            guard !state.finished, state.outcome == nil, state.buffering.monitor != nil else { return }
            let (measurement, playable) = measureLocked(state)
            let now = Monotonic.now()
            switch state.buffering.rule.update(measurement) {
            case nil: break
            case .loadState(let load): emit(.loadState(load))
            case .stalled:
                // Hold the outputs as a pause does (the audio device keeps what it had not played), and the clock.
                control.hold(true)
                clock.pause()
                state.buffering.stalls += 1
                state.buffering.stallBegan = now
                emit(.loadState(.stalled))
                emit(.playbackState(.interrupted))
                emit(.position(seconds: max(clock.position(), 0), at: Date().timeIntervalSince1970))
            case .recovered(let load):
                closeStallLocked(&state, at: now)
                // The wait before the start ended: playback starts (the access log's `startupTime` counts the wait).
                if state.clockStarted && state.log.firstFrame == nil { state.log.firstFrame = Date() }
                emit(.loadState(load))
                // A user's pause during the stall stays a pause.
                if control.current == .playing && state.clockStarted && !state.seeking {
                    startClock(&state) { clock.resume(time: $0) }
                    emit(.playbackState(.playing))
                }
            }
            reportBufferedLocked(&state, playable: playable, measurement: measurement, now: now)
        }
    }

    /// Playback is about to start, its clock standing at the first frame: for a film over the network (served media,
    /// read ahead; a URL) of known size and duration whose playthrough is judged not OK (`BufferingRule.waitsToStart`),
    /// holds the outputs and returns true; the buffering monitor then starts the clock as it ends a stall. A local
    /// file never waits (its rate over the first reads says nothing about a link). This wait is not counted as a stall
    /// (the access log's `stalls`): nothing played yet. Call inside the monitor, with its state, before `clockStarted`
    /// is set.
    func waitToStartLocked(_ state: inout State) -> Bool {
        guard readAhead != nil || source == nil, state.buffering.size != nil, state.duration != nil,
            state.buffering.monitor != nil
        else { return false }
        guard state.buffering.rule.waitsToStart(measureLocked(state).measurement) else { return false }
        control.hold(true)
        return true
    }

    /// Restarts the clock when it should run but stands: the audio output paused it at the device's position while
    /// a pause or stall held it, and the hold may have ended just before (resume() or the refill found it running).
    func resumeClockIfPlaying() {
        shared.withLock { state in
            guard state.clockStarted, !state.seeking, !state.buffering.rule.isStalled, control.current == .playing
            else { return }
            startClock(&state) { clock.resume(time: $0) }
        }
    }

    /// A seek ends a stall (it starts over and its segment is judged on its own). Call inside the monitor, with its state.
    func endStallForSeek(_ state: inout State) {
        guard state.buffering.rule.isStalled else { return }
        closeStallLocked(&state, at: Monotonic.now())
        if let load = state.buffering.rule.cancelStall(measureLocked(state).measurement) { emit(.loadState(load)) }
    }

    /// Releases the outputs and counts the stall's time. Call inside the monitor, with its state.
    private func closeStallLocked(_ state: inout State, at now: UInt64) {
        control.hold(false)
        if let began = state.buffering.stallBegan {
            state.buffering.stallSeconds += Double(now &- began) / 1e9
            state.buffering.stallBegan = nil
        }
    }

    /// Seconds stalled so far, counting a stall in progress. Call inside the monitor, with its state.
    func stallSecondsLocked(_ state: State, now: UInt64 = Monotonic.now()) -> Double {
        state.buffering.stallSeconds + (state.buffering.stallBegan.map { Double(now &- $0) / 1e9 } ?? 0)
    }

    /// The input's measured delivery rate over the last seconds (bytes/s), its total bytes, its distinct bytes (a
    /// range read again after a seek counted once) and reading time, and the steady part of those (the read-ahead's
    /// `steadyBytes` and `steadyTime`, `SteadyRate`; all of them for an input FFmpeg reads itself). Call inside the
    /// monitor, with its state.
    func inputStatisticsLocked(_ state: State) -> (
        rate: Double?, bytes: Int64, distinct: Int64, readingTime: Double, steady: (bytes: Int64, time: Double)
    ) {
        if let readAhead {
            let snapshot = readAhead.snapshot
            return (
                snapshot.rate, snapshot.received, snapshot.distinct, snapshot.readingTime,
                (snapshot.steadyBytes, snapshot.steadyTime)
            )
        }
        let now = Double(Monotonic.now()) / 1e9
        let started = state.buffering.readStarted.map { Double($0) / 1e9 }
        let meter = state.buffering.readMeter
        let readingTime = meter.elapsed + max(now - (started ?? now), 0)
        return (
            meter.rate(now: now, readStarted: started), state.buffering.bytesRead, state.buffering.bytesRead,
            readingTime, (state.buffering.bytesRead, readingTime)
        )
    }

    /// What the buffer holds now, and the media time up to which media is playable. Call inside the monitor, with its state.
    private func measureLocked(_ state: State) -> (measurement: BufferingRule.Measurement, playable: Double) {
        let position = max(clock.position(), 0)
        let buffering = state.buffering
        let input = inputStatisticsLocked(state)
        let readAhead = self.readAhead?.snapshot
        // Waiting buffers more while the read-ahead has room and its input works, or, without one, while the demux
        // thread reads on; once nothing can grow, a stall that waits for more would wait for ever.
        let canGrow =
            readAhead.map { !$0.full && !$0.failed } ?? (buffering.budget?.hasEnough != true)
        // Once the read-ahead holds everything up to the end, nothing waits for the network any more.
        let ended = buffering.inputEnded || readAhead?.atEnd == true
        var upTo = BufferingRule.demuxedUpTo(Array(buffering.demuxedUpTo.values)) ?? position
        // Bytes read but not demuxed yet (the read-ahead buffer) count at the media's byte rate.
        if let readAhead, let byteRate = buffering.byteRate, byteRate > 0 {
            upTo += Double(readAhead.buffered) / byteRate
        }
        let duration = state.duration
        if ended, let duration { upTo = max(upTo, duration) }
        if let duration { upTo = min(upTo, duration) }
        let ahead = max(upTo - position, 0)
        let rate = Self.judgedRate(recent: input.rate, distinct: input.steady.bytes, readingTime: input.steady.time)
        let measurement = BufferingRule.Measurement(
            ahead: ahead, remaining: duration.map { max($0 - position, 0) }, inputRate: rate,
            mediaByteRate: buffering.byteRate, bytesLeft: readAhead?.bytesLeft.map(Double.init), inputEnded: ended,
            playing: state.clockStarted && !state.seeking && control.current == .playing, rate: clock.rate,
            canGrow: canGrow)
        // The clock may stand past the end (the last frame held for its duration): playable stops at the end.
        let playable = max(upTo, position)
        return (measurement, duration.map { min(playable, $0) } ?? playable)
    }

    /// The input rate the buffering rule judges with (bytes/s): the input's steady rate, its distinct bytes over its
    /// reading time between the ends of two reads a few seconds apart (`SteadyRate`: neither the first bytes' latency,
    /// nor a read in progress whose bytes are not counted yet, nor a gap long past lowers it, and a steady
    /// under-estimate makes a wait on a slow link end late), which a burst (a read served from castd's cache, a range
    /// read again after a seek) does not inflate, and which answers arriving in steps do not shake as they do the last
    /// seconds' rate; the last seconds' rate once it falls below `linkFallRatio` of that (the link fell: a stall is
    /// judged from what arrives now). Nil before the first read.
    static func judgedRate(recent: Double?, distinct: Int64, readingTime: Double) -> Double? {
        guard readingTime > 0.5, distinct > 0 else { return recent }
        let average = Double(distinct) / readingTime
        guard let recent else { return average }
        return recent < average * linkFallRatio ? recent : average
    }

    /// Below this share of the average rate, the last seconds' rate is taken for the link's.
    static let linkFallRatio = 0.5

    /// Sends `buffered` when it moved by a quarter second or more, or a stall's expected wait by a second or more (or
    /// it began or ended), at most every `bufferedEventInterval`; with the link's measured rate, and while stalled the
    /// expected wait. Call inside the monitor, with its state.
    private func reportBufferedLocked(
        _ state: inout State, playable: Double, measurement m: BufferingRule.Measurement, now: UInt64
    ) {
        let ahead = m.ahead
        let wait = state.buffering.rule.expectedWait(m).map { min($0.rounded(.up), Self.longestReportedWait) }
        if let last = state.buffering.reported {
            let waitMoved = (last.wait == nil) != (wait == nil) || abs((last.wait ?? 0) - (wait ?? 0)) >= 1
            guard now &- last.at >= Self.bufferedEventInterval,
                abs(last.playable - playable) >= 0.25 || abs(last.ahead - ahead) >= 0.25 || waitMoved
            else { return }
        }
        state.buffering.reported = (playable, ahead, wait, now)
        // The rate the rule judges with, in bits per second, to a kilobit.
        let linkRate = m.inputRate.map { ($0 * 8 / 1000).rounded() * 1000 }
        emit(
            .buffered(
                playableDuration: (playable * 1000).rounded() / 1000, ahead: (ahead * 1000).rounded() / 1000,
                linkRate: linkRate, wait: wait))
    }

    /// The longest expected wait reported (a day): a link that barely moves gives absurd estimates.
    static let longestReportedWait = 86_400.0
}
