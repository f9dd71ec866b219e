internal import CFFmpeg
import Foundation

extension Player {
    /// The audio output thread: resamples, paces and writes to the device; its position drives the clock.
    ///
    /// Writes never run more than the device buffer ahead of the clock, so a device that accepts audio at once
    /// (ALSA `null`, `file`) still plays in real time. When the device holds audio (its delay is at least a
    /// period), played = written − delay, and the clock follows it: the audio clock is the master.
    func runAudioOutput(frames: BoundedQueue<Frame>, timing: StreamTiming, device: AlsaDevice?) {
        do {
            try AudioWriter(player: self, frames: frames, timing: timing, device: device).run()
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
    /// Media time of the first sample written.
    var base = 0.0
    /// Frames written (at `rate`).
    var written: Int64 = 0
    var rate = 48_000
    /// The most recent bytes written, so that what a pause dropped from the device is written again on resume.
    var recent: [UInt8] = []
    let recentLimit: Int
    /// How far writes may run ahead of the clock: the device buffer.
    let lead: Double

    init(player: Player, frames: BoundedQueue<Frame>, timing: StreamTiming, device: AlsaDevice?) {
        self.player = player
        self.frames = frames
        self.timing = timing
        self.device = device
        self.resampler = device.map { Resampler(outputRate: $0.rate, outputChannels: $0.channels) }
        if let device {
            rate = device.rate
            recentLimit = device.bufferFrames * device.frameBytes
            lead = Double(device.bufferFrames) / Double(device.rate)
        } else {
            recentLimit = 0
            lead = 0.1
        }
    }

    var position: Double { base + Double(written) / Double(rate) }

    func run() throws {
        // The first frame that is due, then the start barrier.
        var first: Frame?
        while first == nil {
            guard let item = frames.take() else { return }
            guard case .item(let frame) = item else { break }
            let start = timing.seconds(of: frame) ?? 0
            let length = Double(frame.pointer.pointee.nb_samples) / Double(max(frame.pointer.pointee.sample_rate, 1))
            if player.configuration.startTime > 0 && start + length <= player.configuration.startTime { continue }
            first = frame
        }
        if let first {
            base = timing.seconds(of: first) ?? player.configuration.startTime
            if device == nil { rate = Int(max(first.pointer.pointee.sample_rate, 1)) }
        }
        player.offerFirstFrame(at: first.map { _ in base })
        guard player.control.arrive(thenStart: player.startClockFromPreroll) else { return }
        guard var frame = first else { return }
        while true {
            try play(frame)
            guard let item = frames.take() else { return }
            guard case .item(let next) = item else { break }
            frame = next
        }
        try resampler?.convert(nil) { try write($0) }
        guard player.control.current != .stopping else { return }
        device?.drain()
        // The device may have taken the last audio early (ALSA null/file): end when the clock gets there.
        try waitUntilDue(position)
    }

    private func play(_ frame: Frame) throws {
        if let resampler {
            try resampler.convert(frame) { try write($0) }
        } else {
            let samples = Int64(frame.pointer.pointee.nb_samples)
            let step = Int64(rate / 40)
            var done: Int64 = 0
            while done < samples {
                try waitUntilDue(position - lead)
                let n = min(step, samples - done)
                written += n
                done += n
            }
        }
    }

    /// Writes interleaved S16 in period-sized pieces, each when the clock allows it.
    private func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let device else { return }
        let chunk = device.periodFrames * device.frameBytes
        var offset = 0
        while offset < bytes.count {
            try waitUntilDue(position - lead)
            let piece = UnsafeRawBufferPointer(rebasing: bytes[offset..<min(offset + chunk, bytes.count)])
            let frames = try device.write(piece)
            written += Int64(frames)
            offset += frames * device.frameBytes
            remember(piece)
            let delay = device.delay()
            if delay >= device.periodFrames {
                let played = position - Double(delay) / Double(rate)
                player.clock.follow(played, at: Monotonic.now(), tolerance: 0.02)
            }
        }
    }

    private func remember(_ piece: UnsafeRawBufferPointer) {
        guard recentLimit > 0 else { return }
        recent.append(contentsOf: piece)
        if recent.count > recentLimit { recent.removeFirst(recent.count - recentLimit) }
    }

    /// Waits until media time `media` is due on the clock, handling pause and stop on the way.
    private func waitUntilDue(_ media: Double) throws {
        while true {
            switch player.control.current {
            case .stopping: throw Stopped()
            case .paused: try pauseDevice()
            case .playing:
                guard let due = player.clock.dueTime(of: media) else {
                    player.control.sleep(until: Monotonic.now() + 10_000_000)
                    continue
                }
                if Monotonic.now() >= due { return }
                player.control.sleep(until: due, limit: 0.05)
            }
        }
    }

    /// Pause: stop the device at once (snd_pcm_drop), wait, then write again what it had not played yet.
    private func pauseDevice() throws {
        var unplayed = 0
        if let device {
            let delay = device.delay()
            if delay >= device.periodFrames {
                player.clock.pause(at: position - Double(delay) / Double(rate))
            }
            unplayed = min(delay * device.frameBytes, recent.count)
            device.drop()
        }
        guard player.control.waitWhilePaused() else { throw Stopped() }
        guard let device else { return }
        device.prepare()
        if unplayed > 0 {
            let tail = Array(recent.suffix(unplayed))
            _ = try tail.withUnsafeBytes { try device.write($0) }
        }
    }
}

/// Thrown inside an output thread when playback is being stopped; not a failure.
struct Stopped: Error {}

