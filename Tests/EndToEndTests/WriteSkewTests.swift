import CastTestSupport
import XCTest

/// The group start's measure (`WriteSkew`) on reads made up here: what it must see, and what it must not.
final class WriteSkewTests: XCTestCase {
    /// Bytes per second: S16 stereo at 48 kHz.
    private let rate = 192_000.0

    /// A member writing a period of 4800 bytes every 25 ms from `start` (s), each read `late(index)` s after it was due.
    private func reads(from start: Double, seconds: Double, late: (Int) -> Double = { _ in 0 }) -> [FIFOCapture.Read] {
        (1...Int(seconds * 40)).map { index in
            let total = index * 4800
            return FIFOCapture.Read(
                arrival: Int64(((start + Double(total) / rate + late(index)) * 1e9).rounded()), total: total)
        }
    }

    /// Two members 0.3 ms apart from their first byte: every window, the first included, says 0.3 ms, whatever the
    /// wake-ups added to most reads (the least of a window's reads is where the member stood).
    func testTheSkewIsSeenFromTheFirstWindowThroughWakeUpJitter() throws {
        let first = reads(from: 10, seconds: 4) { $0 % 4 == 0 ? 0 : 0.004 * Double($0 % 3) }
        let second = reads(from: 10.0003, seconds: 4) { $0 % 5 == 0 ? 0 : 0.002 }
        let windows = WriteSkew.windows([first, second], bytesPerSecond: rate)
        XCTAssertEqual(windows.count, 14, "4 s less the last half second, a quarter second each")
        XCTAssertEqual(windows.first?.start, 0)
        for window in windows { XCTAssertEqual(window.skew, 0.0003, accuracy: 1e-6, "at \(window.start) s") }
        let quantiles = try XCTUnwrap(WriteSkew.quantiles(windows, in: 0..<1))
        XCTAssertEqual(quantiles.count, 4)
        XCTAssertEqual(quantiles.max, 0.0003, accuracy: 1e-6)
    }

    /// A window one member was read in fewer than 3 times (its reader held up: the pipe took what castd wrote) is not
    /// judged; the others are.
    func testAWindowAReaderSleptThroughIsNotJudged() {
        let steady = reads(from: 10, seconds: 3)
        // The second member's reader slept through the second window: one read took its ten periods, 30 ms late.
        let slept = reads(from: 10, seconds: 3).filter { $0.total <= 48_000 || $0.total >= 96_000 }.map { read in
            read.total == 96_000 ? FIFOCapture.Read(arrival: read.arrival + 30_000_000, total: read.total) : read
        }
        let windows = WriteSkew.windows([steady, slept], bytesPerSecond: rate)
        XCTAssertEqual(windows.map(\.start), [0, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.25])
        XCTAssertEqual(windows.map(\.skew).max() ?? 1, 0, accuracy: 1e-6)
    }
}
