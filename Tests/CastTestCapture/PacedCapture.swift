// A sound card the test controls: castd's ALSA file PCM writes into a FIFO that this reader drains at its own crystal's
// pace, as a DAC would, so that castd's writes block on it and the card, not castd, sets the pace.
import CastProtocol
public import Foundation
import Glibc

/// A DAC made of a FIFO: a thread reads one pipe page (4096 bytes) at each of its deadlines, `rate` frames per second
/// of this test's CLOCK_MONOTONIC (48 kHz × (1 + ppm·10⁻⁶), absolute deadlines, so its crystal neither wanders nor
/// catches up), beginning when the first bytes arrive (a card starts with its first write). The pipe is made one page
/// (F_SETPIPE_SZ), so a writer that runs ahead blocks until the card takes the page. Frame i of what was read is played
/// at `start + i / rate`, exactly as on a card; a deadline that finds less than a page is an underrun (the card plays
/// silence for the missing part, which is recorded as zeros so that later frames keep their times).
public final class PacedCapture: @unchecked Sendable {
    // Invariant: `fd`, `path`, `rate`, `frameBytes` are set in init; `state` is read and written only under `lock`.
    public let path: String
    /// Frames per second on this test's clock.
    public let rate: Double
    /// Bytes per frame (S16 × channels).
    public let frameBytes: Int
    /// Bytes read at each deadline: one pipe page.
    public static let page = 4096
    private let fd: Int32
    private let lock = NSLock()
    private var state:
        (bytes: Data, start: Int64?, underruns: [Int], lastData: Int, stopped: Bool) = (Data(), nil, [], 0, false)
    private let done = DispatchSemaphore(value: 0)

    /// A card `ppm` fast (negative: slow) against this test's clock, taking S16 audio of `channels` at `nominalRate`.
    public init(path: String, ppm: Double, channels: Int, nominalRate: Int = 48_000) throws {
        self.path = path
        rate = Double(nominalRate) * (1 + ppm * 1e-6)
        frameBytes = channels * 2
        guard mkfifo(path, 0o666) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        chmod(path, 0o666)
        // Read-write, as FIFOCapture: castd's open never blocks, and no end of file is seen between two streams.
        fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        // F_SETPIPE_SZ (1031, Linux): the smallest pipe, one page.
        guard fcntl(fd, 1031, Int32(Self.page)) >= Self.page else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        let thread = Thread { [self] in run() }
        thread.name = "paced capture"
        thread.start()
    }

    /// Every byte played so far (zeros where the card ran dry).
    public var bytes: Data { lock.withLock { state.bytes } }
    /// When the card began playing (CLOCK_MONOTONIC ns), nil before the first bytes came.
    public var start: Int64? { lock.withLock { state.start } }
    /// Bytes played so far.
    public var total: Int { lock.withLock { state.bytes.count } }

    /// The byte offsets at which the card found less than a page while more was still to come: underruns during play
    /// (not the silence after the stream ended).
    public var underruns: [Int] { lock.withLock { state.underruns.filter { $0 < state.lastData } } }

    /// When the frame at byte `offset` was played, on this test's clock (s).
    public func playTime(ofByte offset: Int) -> Double? {
        guard let start else { return nil }
        return Double(start) / 1e9 + Double(offset / frameBytes) / rate
    }

    private func run() {
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
            if got < Self.page { buffer.withUnsafeMutableBytes { _ = memset($0.baseAddress! + got, 0, Self.page - got) } }
            lock.withLock {
                if got < Self.page { state.underruns.append(state.bytes.count) }
                if got > 0 { state.lastData = state.bytes.count + got }
                state.bytes.append(contentsOf: buffer)
            }
        }
        done.signal()
    }

    /// Stops the card (after waiting up to 5 s for `atLeast` bytes) and closes the FIFO.
    public func stop(atLeast expected: Int = 0) {
        let deadline = Date(timeIntervalSinceNow: 5)
        while lock.withLock({ state.lastData }) < expected && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        let first = lock.withLock { () -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        if first {
            done.wait()
            close(fd)
        }
    }

    deinit { stop() }
}
