import CastBase
import CastProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// A mirrored screen's sound through the engine's ALSA output (`AlsaDevice`), each unit heard when
/// `MirrorSoundSchedule` says: in line with the pictures, after a small jitter buffer. The device opens with the
/// first unit (its rate and channels); units that do not fit a changed format are skipped.
///
/// Thread-safety: the mirror thread calls `arrived`, `shown` and `close`; one thread of its own (`castd.mirror.sound`)
/// writes to the device. They share only `state`, inside the monitor.
final class MirrorSoundOutput: Sendable {
    /// Units waiting at most: a second of 10 ms units; beyond, the oldest goes (the device is stuck or gone).
    static let maximumQueued = 100

    /// The device's buffer: small, since a PCM that does not pace itself is heard a buffer after it is written (and a
    /// card's delay is what was written ahead of the moment); 40 ms in 4 periods of 10 ms, a unit each.
    static let bufferTime: UInt32 = 40_000

    private struct State {
        var queue: [(captured: UInt64, sound: MirrorSound)] = []
        var schedule = MirrorSoundSchedule()
        var closed = false
        var finished = false
    }
    private let state = Monitor(State())
    private let deviceName: String
    private let clock: AudioClock
    private let log: MediaLog

    /// An output to the ALSA PCM `deviceName`, paced as `clock` says; its problems go to `log`.
    init(deviceName: String, clock: AudioClock, log: MediaLog) {
        self.deviceName = deviceName
        self.clock = clock
        self.log = log
        startDetachedThread(name: "castd.mirror.sound") { [self] in run() }
    }

    /// Any unit of the stream arrived (it tells the clocks' offset).
    func arrived(captured: UInt64) {
        let now = Self.now()
        state.withLock { $0.schedule.arrived(captured: captured, at: now) }
    }

    /// A picture captured at `captured` was just shown.
    func shown(captured: UInt64) {
        let now = Self.now()
        state.withLock { $0.schedule.shown(captured: captured, at: now) }
    }

    /// A sound unit arrived: it is queued for its moment.
    func play(_ sound: MirrorSound, captured: UInt64) {
        let now = Self.now()
        state.withLock { state in
            state.schedule.arrived(captured: captured, at: now)
            if state.queue.count >= Self.maximumQueued { state.queue.removeFirst() }
            state.queue.append((captured, sound))
        }
    }

    /// Stops the sound thread (what is queued is not played) and waits for it to let the device go.
    func close() {
        state.withLock { $0.closed = true }
        state.wait(until: { $0.finished }, timeout: 5)
    }

    private static func now() -> Int64 { MonotonicClock.nanoseconds() / 1000 }

    private func run() {
        var device: AlsaDevice?
        var failed = false
        while true {
            let next = state.withLock(when: { !$0.queue.isEmpty || $0.closed }) { state in
                state.closed ? nil : (state.queue.removeFirst(), state.schedule)
            }
            guard let ((captured, sound), schedule) = next else { break }
            if device == nil && !failed {
                do {
                    let opened = try AlsaDevice(
                        name: deviceName, rate: sound.rate, channels: sound.channels, clock: clock,
                        bufferTime: Self.bufferTime)
                    let latency = opened.pacesItself ? 0 : Int64(opened.bufferFrames) * 1_000_000 / Int64(opened.rate)
                    state.withLock { $0.schedule.deviceLatency = latency }
                    device = opened
                    // This first piece was timed without the device's latency: the next 10 ms are.
                    continue
                } catch {
                    failed = true
                    log("mirror: no sound: \(error)")
                }
            }
            guard let device, device.rate == sound.rate, device.channels == sound.channels else { continue }
            write(sound, captured: captured, to: device, schedule: schedule)
        }
        device?.drop()
        device = nil
        state.withLock { $0.finished = true }
    }

    /// Writes one unit at its moment: waits or writes silence when it is early, cuts its start when it is late.
    private func write(_ sound: MirrorSound, captured: UInt64, to device: AlsaDevice, schedule: MirrorSoundSchedule) {
        // What is written now is heard after what the device holds: a card tells (its delay); a PCM that ends in
        // `null` takes audio at once and is heard, as the engine counts it (`lead`), a buffer's length later.
        let held = device.pacesItself ? device.delay() : device.bufferFrames
        let queued = Int64(held) * 1_000_000 / Int64(device.rate)
        var skip = 0
        switch schedule.decide(captured: captured, frames: sound.frames, rate: sound.rate, heard: Self.now() + queued) {
        case .play: break
        case .early(let early):
            if device.pacesItself {
                let silence = [UInt8](
                    repeating: 0, count: Int(early * Int64(device.rate) / 1_000_000) * device.frameBytes)
                _ = try? silence.withUnsafeBytes { try device.write($0) }
            } else {
                // A device that takes what it is given does not wait by itself: the wait is the silence.
                var pause = timespec(tv_sec: Int(early / 1_000_000), tv_nsec: Int(early % 1_000_000) * 1000)
                nanosleep(&pause, nil)
            }
        case .late(let frames): skip = frames
        }
        guard skip < sound.frames else { return }
        do {
            _ = try sound.samples.withUnsafeBytes { bytes in
                try device.write(UnsafeRawBufferPointer(rebasing: bytes[(skip * device.frameBytes)...]))
            }
        } catch {
            log("mirror: sound: \(error)")
        }
    }
}
