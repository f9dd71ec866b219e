// A sound card the test controls: castd's ALSA file PCM writes into a FIFO that this reader drains at its own crystal's
// pace, as a DAC would, so that castd's writes block on it and the card, not castd, sets the pace.
import CastBase
import CastProtocol
public import Foundation
import Glibc

/// A DAC made of a FIFO: a thread reads one pipe page (4096 bytes) at each of its deadlines, `rate` frames per second
/// of this test's CLOCK_MONOTONIC (48 kHz × (1 + ppm·10⁻⁶), absolute deadlines, so its crystal neither wanders nor
/// catches up), beginning when the first bytes arrive (a card starts with its first write). The pipe is the card's
/// buffer (F_SETPIPE_SZ: `pages` of 4096 bytes), so a writer that runs ahead blocks until the card takes a page.
/// (ALSA's file plugin before it is no buffer: it holds back one ALSA buffer and passes on what each write adds, only
/// when castd writes; with a pipe of one page castd's writer woke too late for its next write a quarter of the time on
/// a loaded machine.) A writer learns where the card is only when a page is freed: the wider a frame, the finer that
/// grain (16 channels of S32 make a page 64 frames, 1.3 ms). Only channel 0 is kept, as S16 (`samples`). Frame i of
/// what was read is played at `start + i / rate`, exactly as on a card; a deadline that finds less than a page is an
/// underrun (the card plays silence for the missing part, which is recorded as zeros so that later frames keep their
/// times).
public final class PacedCapture: @unchecked Sendable {
    // Invariant: `fd`, `path`, `rate`, `frameBytes` are set in init; `state` is read and written only under `lock`.
    public let path: String
    /// Frames per second on this test's clock.
    public let rate: Double
    /// Bytes per frame in the pipe (sample bytes × channels).
    public let frameBytes: Int
    private let sampleBytes: Int
    /// Bytes read at each deadline: one pipe page.
    public static let page = 4096
    private let fd: Int32
    private let lock = NSLock()
    /// Channel 0 as S16 (`bytes`), the frames played (`frames`, ones the card ran dry for included), where it ran dry
    /// and the frame count when data last came.
    private var state: (bytes: Data, frames: Int, start: Int64?, underruns: [Int], lastData: Int, stopped: Bool) =
        (Data(), 0, nil, [], 0, false)
    private let done = DispatchSemaphore(value: 0)

    /// A card `ppm` fast (negative: slow) against this test's clock, taking `channels` of little-endian integer samples
    /// of `sampleBytes` (2: S16, 4: S32) at `nominalRate`, with a buffer of `pages`.
    public init(
        path: String, ppm: Double, channels: Int, sampleBytes: Int = 2, nominalRate: Int = 48_000, pages: Int = 32
    ) throws {
        self.path = path
        rate = Double(nominalRate) * (1 + ppm * 1e-6)
        self.sampleBytes = sampleBytes
        frameBytes = channels * sampleBytes
        guard mkfifo(path, 0o666) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        chmod(path, 0o666)
        // Read-write, as FIFOCapture: castd's open never blocks, and no end of file is seen between two streams.
        fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        // F_SETPIPE_SZ (1031, Linux).
        guard fcntl(fd, 1031, Int32(Self.page * pages)) >= Self.page * pages else {
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        let thread = Thread { [self] in run() }
        thread.name = "paced capture"
        thread.start()
    }

    /// Channel 0 of every frame played so far, S16 (zeros where the card ran dry).
    public var samples: Data { lock.withLock { state.bytes } }
    /// When the card began playing (CLOCK_MONOTONIC ns), nil before the first bytes came.
    public var start: Int64? { lock.withLock { state.start } }
    /// Frames played so far.
    public var frames: Int { lock.withLock { state.frames } }

    /// The frames at which the card found less than a page while more was still to come, but for the stream's
    /// last half second: underruns during play. (At the end castd drains the device: ALSA's file plugin writes the
    /// buffer it holds back only once its `null` slave has drained, so the card runs dry for a moment just before the
    /// stream's last 100 ms; a card's own drain plays its buffer out.)
    public var underruns: [Int] {
        lock.withLock {
            let end = state.lastData - Int(rate / 2)
            return state.underruns.filter { $0 < end }
        }
    }

    /// Every underrun, the end's included.
    public var allUnderruns: [Int] { lock.withLock { state.underruns.filter { $0 < state.lastData } } }

    /// When frame `index` was played, on this test's clock (s).
    public func playTime(ofFrame index: Int) -> Double? {
        guard let start else { return nil }
        return Double(start) / 1e9 + Double(index) / rate
    }

    private func run() {
        // A DAC is clocked by hardware: the reader runs at real-time priority (the test runs as root), so that a
        // loaded machine does not make it read late, which castd would see as a card running behind.
        var priority = sched_param(sched_priority: 50)
        _ = pthread_setschedparam(pthread_self(), SCHED_FIFO, &priority)
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while !lock.withLock({ state.stopped }) {
            if poll(&poller, 1, 50) > 0 { break }
        }
        let start = MonotonicClock.nanoseconds()
        lock.withLock { state.start = start }
        var buffer = [UInt8](repeating: 0, count: Self.page)
        var chunk: Int64 = 0
        let framesPerChunk = Double(Self.page / frameBytes)
        while !lock.withLock({ state.stopped }) {
            let deadline = start + Int64((Double(chunk) * framesPerChunk / rate * 1e9).rounded())
            var due = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
            while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, nil) == EINTR {}
            chunk += 1
            var available: Int32 = 0
            _ = ioctl(fd, UInt(FIONREAD), &available)
            let wanted = min(Int(available), Self.page)
            var got = 0
            while got < wanted {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + got, wanted - got) }
                if n <= 0 { break }
                got += n
            }
            if got < Self.page {
                buffer.withUnsafeMutableBytes { _ = memset($0.baseAddress! + got, 0, Self.page - got) }
            }
            var channel0 = [UInt8](repeating: 0, count: 2 * (Self.page / frameBytes))
            for frame in 0..<(Self.page / frameBytes) {
                // The sample's two most significant bytes (little-endian).
                channel0[2 * frame] = buffer[frame * frameBytes + sampleBytes - 2]
                channel0[2 * frame + 1] = buffer[frame * frameBytes + sampleBytes - 1]
            }
            lock.withLock {
                if got < Self.page { state.underruns.append(state.frames) }
                if got > 0 { state.lastData = state.frames + got / frameBytes }
                state.frames += Self.page / frameBytes
                state.bytes.append(contentsOf: channel0)
            }
        }
        done.signal()
    }

    /// Stops the card (after waiting up to 5 s for `atLeast` frames) and closes the FIFO.
    public func stop(atLeast expected: Int = 0) {
        stopReader(fd: fd, done: done, reached: { lock.withLock { state.lastData } >= expected }) {
            lock.withLock { () -> Bool in
                defer { state.stopped = true }
                return !state.stopped
            }
        }
    }

    deinit { stop() }
}
