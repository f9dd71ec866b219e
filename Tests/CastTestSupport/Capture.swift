// What the group tests measure from outside castd, shared by EndToEndTests and CastKitTests: a FIFO castd's ALSA
// file PCM writes into, read and stamped here, and the beeps found in what it read.
import CastBase
import CastProtocol
public import Foundation
import Glibc

/// Reading S16 stereo captures.
public enum Capture {
    /// ffmpeg's arguments for a file of `seconds` whose every second begins with a 10 ms beep at 1 kHz, silence
    /// otherwise (FLAC, 48 kHz stereo), written to `path`.
    public static func beepFileCommand(seconds: Int, path: String) -> [String] {
        [
            "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
            "aevalsrc=exprs=if(lt(mod(t\\,1)\\,0.01)\\,0.8*sin(2*PI*1000*t)\\,0):s=48000:d=\(seconds)", "-ac", "2",
            "-c:a", "flac", path,
        ]
    }

    /// The byte offset of the first beep onset at or after byte `from` of an S16 capture of `channels` (channel 0): the
    /// first sample out of silence (over 1 % of full scale after 100 samples under it) that a sample over a tenth of
    /// full scale follows within 10.
    public static func beepOnset(in bytes: Data, from: Int, channels: Int = 2) -> Int? {
        bytes.withUnsafeBytes { raw -> Int? in
            let stride = channels * 2
            let frames = raw.count / stride
            guard from / stride < frames else { return nil }
            func sample(_ frame: Int) -> Int {
                abs(Int(Int16(littleEndian: raw.loadUnaligned(fromByteOffset: frame * stride, as: Int16.self))))
            }
            var quiet = 0
            for frame in (from / stride)..<frames {
                if sample(frame) < 328 {
                    quiet += 1
                    continue
                }
                if quiet >= 100, (frame..<min(frame + 10, frames)).contains(where: { sample($0) > 3277 }) {
                    return frame * stride
                }
                quiet = 0
            }
            return nil
        }
    }

    /// The largest absolute sample of channel 0 among `range` bytes of an S16 stereo capture.
    public static func peak(_ bytes: Data, _ range: Range<Int>) -> Int {
        bytes.withUnsafeBytes { raw in
            let lower = max(range.lowerBound, 0) / 4
            let frames = lower..<max(lower, min(range.upperBound, raw.count) / 4)
            return frames.reduce(0) { peak, frame in
                max(peak, abs(Int(Int16(littleEndian: raw.loadUnaligned(fromByteOffset: frame * 4, as: Int16.self)))))
            }
        }
    }
}

/// A FIFO that castd's ALSA file PCM writes into and this test reads on a thread of its own, stamping each read with
/// CLOCK_MONOTONIC as it arrives. The FIFO is opened read-write here, so castd's open never blocks and a read never
/// sees an end of file between two streams.
public final class FIFOCapture: @unchecked Sendable {
    // Invariant: `fd` and `path` are set in init; `state` is read and written only under `lock`.
    public struct Read: Sendable {
        /// When the read returned (CLOCK_MONOTONIC ns, this process's namespace).
        public let arrival: Int64
        /// Bytes read so far, this read's included.
        public let total: Int

        public init(arrival: Int64, total: Int) {
            self.arrival = arrival
            self.total = total
        }
    }

    public let path: String
    private let fd: Int32
    private let lock = NSLock()
    private var state: (reads: [Read], bytes: Data, stopped: Bool) = ([], Data(), false)
    private let done = DispatchSemaphore(value: 0)

    public init(path: String) throws {
        self.path = path
        guard mkfifo(path, 0o666) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        chmod(path, 0o666)
        fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        let thread = Thread { [self] in run() }
        thread.name = "fifo capture"
        thread.start()
    }

    public var reads: [Read] { lock.withLock { state.reads } }
    /// Every byte read so far.
    public var bytes: Data { lock.withLock { state.bytes } }

    /// Bytes read so far.
    public var total: Int { reads.last?.total ?? 0 }

    /// Bytes read up to `instant` (CLOCK_MONOTONIC ns).
    public func total(at instant: Int64) -> Int { reads.last { $0.arrival <= instant }?.total ?? 0 }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var total = 0
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while !lock.withLock({ state.stopped }) {
            guard poll(&poller, 1, 50) > 0 else { continue }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            let arrival = MonotonicClock.nanoseconds()
            guard n > 0 else { continue }
            total += n
            lock.withLock {
                state.reads.append(Read(arrival: arrival, total: total))
                state.bytes.append(contentsOf: buffer[..<n])
            }
        }
        done.signal()
    }

    /// Stops reading once `atLeast` bytes arrived (the device's last bytes come when castd closes it, after the
    /// sender heard the finish), or 5 s passed, and returns every read.
    @discardableResult
    public func stop(atLeast expected: Int = 0) -> [Read] {
        stopReader(fd: fd, done: done, reached: { (reads.last?.total ?? 0) >= expected }) {
            lock.withLock { () -> Bool in
                defer { state.stopped = true }
                return !state.stopped
            }
        }
        return reads
    }

    deinit { stop() }
}

/// Ends a FIFO reader thread: waits until `reached` holds (a hang bound of 5 s: the device's last bytes come when
/// castd closes it), then, for the first caller only (`markStopped` says whether it was), waits for the reader to
/// see the stop (`done`) and closes `fd`.
func stopReader(fd: Int32, done: DispatchSemaphore, reached: () -> Bool, markStopped: () -> Bool) {
    _ = waitUntil(timeout: 5, reached)
    if markStopped() {
        done.wait()
        close(fd)
    }
}

extension FIFOCapture {
    /// Waits until `bytes` have been read (at most `timeout` seconds); whether they were.
    @discardableResult
    public func waitForTotal(_ bytes: Int, timeout: Double = 30) -> Bool {
        waitUntil(timeout: timeout) { total >= bytes }
    }
}
