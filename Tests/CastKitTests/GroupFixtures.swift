import CastKit
import CastProtocol
import Foundation
import Glibc
import XCTest

/// What the group tests measure from outside castd: each receiver's ALSA output is a FIFO this process reads, stamping
/// every read with its own CLOCK_MONOTONIC on arrival (the method of EndToEndTests' GroupTests, whose FIFO reader this
/// is: the two test targets share no code).
enum GroupFixtures {
    /// Bytes per second of a capture: S16 stereo at 48 kHz.
    static let rate = 192_000.0

    /// A file of `seconds` whose every second begins with a 10 ms beep at 1 kHz, silence otherwise (FLAC, 48 kHz).
    static func beeps(seconds: Int, in folder: URL) throws -> URL {
        let url = folder.appendingPathComponent("beeps.flac")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
            "aevalsrc=exprs=if(lt(mod(t\\,1)\\,0.01)\\,0.8*sin(2*PI*1000*t)\\,0):s=48000:d=\(seconds)", "-ac", "2",
            "-c:a", "flac", url.path,
        ]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "ffmpeg failed")
        return url
    }

    /// How far apart the captures wrote the first beep half a second or more into the last stretch each wrote without
    /// a pause between `from` and `to` (CLOCK_MONOTONIC ns), on this process's clock (s). The beeps are a second
    /// apart: compared within one.
    static func spread(_ captures: [FIFOCapture], between from: Int64, and to: Int64) throws -> Double {
        var heard: [Double] = []
        for capture in captures {
            let reads = capture.reads.filter { $0.arrival > from && $0.arrival < to }
            // The last stretch: after the last silence of 200 ms or more.
            let gap = reads.indices.dropFirst().last { reads[$0].arrival - reads[$0 - 1].arrival > 200_000_000 }
            let stretch = Array(reads[(gap ?? 0)...])
            let first = (gap.map { reads[$0 - 1].total } ?? stretch.first?.total ?? 0) + Int(rate) / 2
            let onset = try XCTUnwrap(beepOnset(in: capture.bytes, from: first), "\(capture.path): no beep")
            // Placed by the reads that carried it and the next 0.3 s.
            let near = stretch.filter { $0.total > onset && $0.total < onset + Int(rate * 0.3) }
            XCTAssertGreaterThan(near.count, 5, "\(capture.path): the beep at \(onset) came at the end of the stretch")
            let start = near.map { Double($0.arrival) / 1e9 - Double($0.total) / rate }.min() ?? 0
            heard.append(start + Double(onset) / rate)
        }
        let apart = heard.map { (($0 - heard[0]) + 0.5).truncatingRemainder(dividingBy: 1) - 0.5 }
        return apart.max()! - apart.min()!
    }

    /// The byte offset of the first beep onset at or after byte `from` of an S16 stereo capture (channel 0): the first
    /// sample out of silence (over 1 % of full scale after 100 samples under it) that a sample over a tenth of full
    /// scale follows within 10.
    static func beepOnset(in bytes: Data, from: Int) -> Int? {
        bytes.withUnsafeBytes { raw -> Int? in
            let frames = raw.count / 4
            guard from / 4 < frames else { return nil }
            func sample(_ frame: Int) -> Int {
                abs(Int(Int16(littleEndian: raw.loadUnaligned(fromByteOffset: frame * 4, as: Int16.self))))
            }
            var quiet = 0
            for frame in (from / 4)..<frames {
                if sample(frame) < 328 {
                    quiet += 1
                    continue
                }
                if quiet >= 100, (frame..<min(frame + 10, frames)).contains(where: { sample($0) > 3277 }) {
                    return frame * 4
                }
                quiet = 0
            }
            return nil
        }
    }

    /// The largest absolute sample of channel 0 among `range` bytes of an S16 stereo capture.
    static func peak(_ bytes: Data, _ range: Range<Int>) -> Int {
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
final class FIFOCapture: @unchecked Sendable {
    // Invariant: `fd` and `path` are set in init; `state` is read and written only under `lock`.
    struct Read: Sendable {
        /// When the read returned (CLOCK_MONOTONIC ns).
        let arrival: Int64
        /// Bytes read so far, this read's included.
        let total: Int
    }

    let path: String
    private let fd: Int32
    private let lock = NSLock()
    private var state: (reads: [Read], bytes: Data, stopped: Bool) = ([], Data(), false)
    private let done = DispatchSemaphore(value: 0)

    init(path: String) throws {
        self.path = path
        guard mkfifo(path, 0o600) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        let thread = Thread { [self] in run() }
        thread.name = "fifo capture"
        thread.start()
    }

    var reads: [Read] { lock.withLock { state.reads } }
    /// Every byte read so far.
    var bytes: Data { lock.withLock { state.bytes } }
    /// Bytes read so far.
    var total: Int { reads.last?.total ?? 0 }

    /// Bytes read up to `instant` (CLOCK_MONOTONIC ns).
    func total(at instant: Int64) -> Int { reads.last { $0.arrival <= instant }?.total ?? 0 }

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

    /// Stops reading once `atLeast` bytes arrived, or 5 s passed, and returns every read.
    @discardableResult
    func stop(atLeast expected: Int = 0) -> [Read] {
        let deadline = Date(timeIntervalSinceNow: 5)
        while total < expected && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        let first = lock.withLock { () -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        if first {
            done.wait()
            close(fd)
        }
        return reads
    }

    deinit { stop() }
}
