internal import CFFmpeg
import Foundation

extension Player {
    /// The audio output thread: resamples, paces and writes to the device; its position drives the clock.
    ///
    /// Writes never run more than the device buffer ahead of the clock, so a device that accepts audio at once
    /// (ALSA `null`, `file`) still plays in real time. When the device holds audio (its delay is at least a
    /// period), played = written − delay, and the clock follows it: the audio clock is the master.
    ///
    /// A device that paces itself (`AlsaDevice.pacesItself`, a sound card) is written as fast as it takes audio, its
    /// blocking writes setting the pace; a segment's first audio is preceded by silence up to the instant it is due.
    /// In a group, its drift from the clock (which `align` keeps on the group's timeline) is corrected by resampling
    /// (`DriftCompensation`, `Resampler.stretch`).
    func runAudioOutput(frames: BoundedQueue<Frame>, timing: StreamTiming, device: AlsaDevice?, streamName: String) {
        do {
            try AudioWriter(player: self, frames: frames, timing: timing, device: device, streamName: streamName).run()
        } catch is Stopped {
        } catch {
            fail(error)
        }
    }
}

/// The state of one audio output thread.
private final class AudioWriter {
    let player: Player
    let frames: BoundedQueue<Frame>
    let timing: StreamTiming
    let device: AlsaDevice?
    let resampler: Resampler?
    /// The segment being played (its serial).
    var serial = 0
    /// Media time of the first sample written in this segment.
    var base = 0.0
    /// Media seconds written in this segment (device frames ÷ rate × the tempo they were played at).
    var written = 0.0
    var rate = 48_000
    /// Output frames still to be thrown away at the start of a segment: audio before an exact seek's target.
    var skipFrames = 0
    /// The most recent bytes written, so that what a pause dropped from the device is written again on resume.
    var recent: [UInt8] = []
    let recentLimit: Int
    /// How far writes may run ahead of the clock: the device buffer.
    let lead: Double
    /// Samples scaled by the volume.
    var scaled: [Int16] = []
    /// The tempo filter while the playback rate is not 1.
    var tempo: AudioTempo?
    /// Device frames written since the device was opened (the timing log's count).
    var deviceFrames = 0
    /// Whether the device paces itself (`AlsaDevice.pacesItself`).
    let pacesItself: Bool
    /// Whether the segment's first audio is still to be preceded by silence up to its instant (a self-paced device).
    var needsPriming = false
    /// The controller of a self-paced device's drift in a group, and the group start it follows (nil: none yet).
    var drift = DriftCompensation(calibrates: false)
    var driftStart: UInt64?
    /// The media seconds each device frame of the resampler's current output stands for, per second of the rate.
    var mediaPerFrame = 1.0
    /// Test only (`CAST_TEST_DRIFT_COMPENSATION=off`): the drift is measured and reported, never corrected, so that a
    /// test can show what the correction does.
    static let correctsDrift = ProcessInfo.processInfo.environment["CAST_TEST_DRIFT_COMPENSATION"] != "off"
    /// Test only (`CAST_TEST_DRIFT_LOG`): a line a second on standard error with the error measured and the correction.
    static let logsDrift = ProcessInfo.processInfo.environment["CAST_TEST_DRIFT_LOG"] != nil
    var lastDriftLog: UInt64 = 0

    init(player: Player, frames: BoundedQueue<Frame>, timing: StreamTiming, device: AlsaDevice?, streamName: String) {
        self.player = player
        self.frames = frames
        self.timing = timing
        self.device = device
        pacesItself = device?.pacesItself ?? false
        self.resampler = device.map {
            Resampler(
                outputRate: $0.rate, speakers: $0.speakers, streamName: streamName, compensates: $0.pacesItself)
        }
        if let device {
            rate = device.rate
            recentLimit = device.bufferFrames * device.frameBytes
            lead = Double(device.bufferFrames) / Double(device.rate)
        } else {
            recentLimit = 0
            lead = 0.1
        }
    }

    var position: Double { base + written }

    /// Plays segment after segment (one per seek) until every output reached the end of the same one.
    func run() throws {
        var reader = SegmentReader(frames: frames, control: player.control)
        while true {
            // The segment's first frame that is due: after an exact seek, the one containing the target.
            let segment = reader.segment
            let start = reader.firstFrame { frame, target in
                let length =
                    Double(frame.pointer.pointee.nb_samples) / Double(max(frame.pointer.pointee.sample_rate, 1))
                return (timing.seconds(of: frame) ?? 0) + length <= target
            }
            guard let start else { return }
            guard case .first(let first) = start else { continue }
            let firstTime = first.map { timing.seconds(of: $0) ?? segment.target ?? player.configuration.startTime }
            if let first, device == nil { rate = Int(max(first.pointer.pointee.sample_rate, 1)) }
            let anchor: Double
            switch player.control.arrive(
                serial: segment.serial, firstFrameAt: firstTime, thenStart: player.startSegment)
            {
            case .stopping: return
            case .superseded:
                reader.catchUp()
                continue
            case .passed(let at): anchor = at
            }
            begin(segment, firstTime: firstTime, anchor: anchor)
            do {
                if let first { try play(from: first, reader: &reader) }
            } catch is Superseded {
                discard()
                reader.catchUp()
                continue
            }
            switch player.control.arriveAtEnd(serial: segment.serial) {
            case .passed, .stopping: return
            case .superseded:
                discard()
                reader.catchUp()
            }
        }
    }

    /// Resets the writer for a segment. At start-up audio begins with its first frame; after a seek, what comes
    /// before the clock's anchor is trimmed, so that audio and the presented frame begin together. A first frame
    /// more than the format's jump (10 s or an hour) from the anchor is a discontinuity (PresentationTimeline): audio begins at the anchor. Within
    /// the segment audio needs no such rule: its position counts the samples written, not their timestamps.
    private func begin(_ segment: PlaybackControl.Segment, firstTime: Double?, anchor: Double) {
        var timeline = PresentationTimeline(maxJump: timing.maxTimestampJump)
        timeline.begin(at: anchor)
        let firstTime = firstTime.map { timeline.place(stamp: $0, duration: 0).time }
        serial = segment.serial
        written = 0
        needsPriming = pacesItself
        restartDrift()
        recent.removeAll()
        skipFrames = 0
        base = firstTime ?? anchor
        if segment.serial > 0, let firstTime, anchor > firstTime {
            skipFrames = Int(((anchor - firstTime) * Double(rate)).rounded())
            base = firstTime + Double(skipFrames) / Double(rate)
        }
    }

    /// Plays a segment from its first frame to its end; throws `Superseded` when a seek interrupts it.
    private func play(from first: Frame, reader: inout SegmentReader) throws {
        var frame = first
        reading: while true {
            try play(frame)
            guard let item = reader.next() else { throw Stopped() }
            switch item {
            case .superseded: throw Superseded()
            case .end: break reading
            case .item(let next): frame = next
            }
        }
        try resampler?.convert(nil) { try deliver($0) }
        try tempo?.process(nil) { [tempo] in try write($0, speed: tempo?.tempo ?? 1) }
        tempo = nil
        guard player.control.current != .stopping else { throw Stopped() }
        device?.drain()
        // The device may have taken the last audio early (ALSA null/file): end when the clock gets there.
        try waitUntilDue(position)
    }

    /// A seek: what the device and the resampler hold belongs to the old position.
    private func discard() {
        device?.drop()
        device?.prepare()
        resampler?.reset()
        tempo = nil
        recent.removeAll()
    }

    private func play(_ frame: Frame) throws {
        if let resampler {
            mediaPerFrame = 1 / (1 + resampler.stretch)
            try resampler.convert(frame) { try deliver($0) }
        } else {
            var samples = Int64(frame.pointer.pointee.nb_samples)
            let skipped = min(Int64(skipFrames), samples)
            skipFrames -= Int(skipped)
            samples -= skipped
            let step = Int64(rate / 40)
            var done: Int64 = 0
            while done < samples {
                try waitUntilDue(position - lead * player.clock.rate)
                let n = min(step, samples - done)
                written += Double(n) / Double(rate)
                done += n
            }
        }
    }

    /// Resampled audio on its way to the device: trimmed to the segment's start, then through the tempo filter
    /// when the rate is not 1 (pitch kept).
    private func deliver(_ bytes: UnsafeRawBufferPointer) throws {
        guard let device else { return }
        var bytes = bytes
        if skipFrames > 0 {
            let n = min(skipFrames, bytes.count / device.frameBytes)
            skipFrames -= n
            bytes = UnsafeRawBufferPointer(rebasing: bytes[(n * device.frameBytes)...])
        }
        let speed = player.clock.rate
        if let current = tempo, current.tempo != speed {
            // What the old filter holds is played at the old tempo, so that nothing is lost.
            try current.process(nil) { try write($0, speed: current.tempo) }
            tempo = nil
        }
        if speed != 1 && tempo == nil {
            tempo = try AudioTempo(tempo: speed, rate: device.rate, channels: device.channels)
        }
        if let tempo {
            try tempo.process(bytes) { try write($0, speed: tempo.tempo) }
        } else {
            try write(bytes, speed: 1)
        }
    }

    /// Writes interleaved S16 in period-sized pieces, each when the clock allows it, at the current volume.
    /// `speed`: the media seconds each second of these samples stands for.
    private func write(_ bytes: UnsafeRawBufferPointer, speed: Double) throws {
        guard let device else { return }
        let chunk = device.periodFrames * device.frameBytes
        var offset = 0
        while offset < bytes.count {
            if !pacesItself || needsPriming {
                try waitUntilDue(position - lead * speed)
            } else {
                // The device's blocking writes pace it; only pause, seek and stop are looked at.
                try waitUntilDue(-.greatestFiniteMagnitude)
            }
            if needsPriming { try prime() }
            let piece = UnsafeRawBufferPointer(rebasing: bytes[offset..<min(offset + chunk, bytes.count)])
            // Read per period, so that a volume change is heard from the next period on.
            let gain = player.gain
            let began = Monotonic.now()
            let frames: Int
            if gain == 1 {
                frames = try device.write(piece)
                remember(piece)
            } else {
                frames = try scale(piece, by: gain) { scaled in
                    remember(scaled)
                    return try device.write(scaled)
                }
            }
            written += Double(frames) / Double(rate) * speed * mediaPerFrame
            offset += frames * device.frameBytes
            deviceFrames += frames
            let delay = device.delay()
            let now = Monotonic.now()
            if pacesItself {
                // A device that reports no delay (the file plugin over null in the lab) is known to be full only when
                // a write had to wait for room (it took half its own length or more): it then holds what it holds
                // when full, a constant `DriftCompensation` calibrates away. A write that did not wait (the engine
                // fell behind for a moment, or the device is filling) says nothing of where the device is.
                let reports = delay >= device.periodFrames
                let waited = frames > 0 && Double(now - began) / 1e9 >= 0.5 * Double(frames) / Double(rate)
                if reports || waited {
                    let held = reports ? delay : device.bufferFrames
                    correctDrift(
                        played: position - Double(held) / Double(rate) * speed * mediaPerFrame, at: now,
                        calibrates: !reports)
                }
            }
            if delay >= device.periodFrames {
                let played = position - Double(delay) / Double(rate) * speed
                player.clock.follow(played, at: now, tolerance: 0.02)
                player.timingLog?.audio(
                    frames: deviceFrames, at: now, latency: Int64(delay) * 1_000_000_000 / Int64(rate))
            } else if let log = player.timingLog, let due = player.clock.dueTime(of: position) {
                log.audio(frames: deviceFrames, at: now, latency: Int64(bitPattern: due &- now))
            }
        }
    }

    /// Silence before a segment's first audio on a self-paced device, so that its first sample is heard at the instant
    /// the clock says (a card starts playing with its first write): from now to that instant, less what it holds.
    private func prime() throws {
        needsPriming = false
        guard let device, let due = player.clock.dueTime(of: position) else { return }
        let now = Monotonic.now()
        guard due > now else { return }
        var frames = Int(Double(due - now) / 1e9 * Double(rate)) - device.delay()
        let silence = [UInt8](repeating: 0, count: device.periodFrames * device.frameBytes)
        while frames > 0 {
            let n = min(frames, device.periodFrames)
            let done = try silence.withUnsafeBytes {
                try device.write(UnsafeRawBufferPointer(rebasing: $0[0..<(n * device.frameBytes)]))
            }
            frames -= n
            deviceFrames += done
        }
    }

    /// Forgets the drift learnt (a seek, a pause: the device starts again, and so may the group's timeline).
    private func restartDrift() {
        drift = DriftCompensation(calibrates: false)
        driftStart = nil
        resampler?.stretch = 0
        player.noteDeviceDrift(offset: nil, ppm: nil)
    }

    /// Keeps a self-paced device on the clock while the player follows a group's timeline: the device's position
    /// (`played` at `now`) against the clock's is the error `DriftCompensation` turns into the rate the media is
    /// resampled at. A new scheduled start begins again.
    private func correctDrift(played: Double, at now: UInt64, calibrates: Bool) {
        guard let start = player.groupStart, now > start, player.clock.isRunning else {
            if driftStart != nil { restartDrift() }
            return
        }
        if driftStart != start {
            drift = DriftCompensation(calibrates: calibrates)
            driftStart = start
        }
        let error = played - player.clock.position(at: now)
        let rate = drift.update(error: error, at: Double(now) / 1e9)
        if Self.logsDrift, now > lastDriftLog + 1_000_000_000 {
            lastDriftLog = now
            FileHandle.standardError.write(
                Data(
                    String(
                        format: "castd: drift %.3f s: error %.3f ms, offset %.3f ms, rate %.1f ppm, written %.4f s\n",
                        Double(now - start) / 1e9, error * 1000, (drift.offset ?? 0) * 1000, (rate - 1) * 1e6, position
                    ).utf8))
        }
        if Self.correctsDrift { resampler?.stretch = 1 / rate - 1 }
        player.noteDeviceDrift(offset: drift.offset, ppm: min(max((rate - 1) * 1e6, -1000), 1000))
    }

    /// Software volume: each S16 sample times `gain` (0...1), rounded to the nearest.
    private func scale<T>(
        _ piece: UnsafeRawBufferPointer, by gain: Double, _ body: (UnsafeRawBufferPointer) throws -> T
    ) rethrows -> T {
        let count = piece.count / 2
        if scaled.count < count { scaled = [Int16](repeating: 0, count: count) }
        return try scaled.withUnsafeMutableBufferPointer { out in
            for i in 0..<count {
                let sample = Int16(littleEndian: piece.loadUnaligned(fromByteOffset: 2 * i, as: Int16.self))
                out[i] = Int16((Double(sample) * gain).rounded()).littleEndian
            }
            return try body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(out)[0..<(count * 2)]))
        }
    }

    private func remember(_ piece: UnsafeRawBufferPointer) {
        guard recentLimit > 0 else { return }
        recent.append(contentsOf: piece)
        if recent.count > recentLimit { recent.removeFirst(recent.count - recentLimit) }
    }

    /// Waits until media time `media` is due on the clock, handling pause, seek and stop on the way.
    private func waitUntilDue(_ media: Double) throws {
        while true {
            switch player.control.status(of: serial) {
            case .stopping: throw Stopped()
            case .superseded: throw Superseded()
            case .paused: try pauseDevice()
            case .playing:
                if player.control.sleep(untilDue: media, on: player.clock) { return }
            }
        }
    }

    /// Pause: stop the device at once (snd_pcm_drop, not drain), wait, then write again what it had not played yet,
    /// so that playback resumes from the sample where it stopped.
    private func pauseDevice() throws {
        var unplayed = 0
        if let device {
            let delay = device.delay()
            if delay >= device.periodFrames {
                player.clock.pause(at: position - Double(delay) / Double(rate) * player.clock.rate)
            }
            unplayed = min(delay * device.frameBytes, recent.count)
            device.drop()
        }
        switch player.control.waitWhilePaused(serial: serial) {
        case .stopping: throw Stopped()
        case .superseded: throw Superseded()
        case .playing, .paused: break
        }
        player.resumeClockIfPlaying()
        guard let device else { return }
        device.prepare()
        restartDrift()
        if unplayed > 0 {
            let tail = Array(recent.suffix(unplayed))
            deviceFrames += try tail.withUnsafeBytes { try device.write($0) }
        }
    }
}

/// Thrown inside an output thread when playback is being stopped; not a failure.
struct Stopped: Error {}

/// Thrown inside an output thread when a seek began a newer segment than the one it plays; not a failure.
struct Superseded: Error {}
