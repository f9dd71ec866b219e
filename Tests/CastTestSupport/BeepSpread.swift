// How far apart group members play, measured from outside castd: shared by EndToEndTests' GroupTests and
// CastKitTests' group routes, which judge their members alike.
import Foundation
import XCTest

extension Capture {
    /// How far apart the captures wrote the first beep half a second or more into the last stretch each wrote without
    /// a pause (200 ms or more) between `from` and `to` (CLOCK_MONOTONIC ns), on this process's clock (s). Each beep is
    /// placed by the reads that carried it and the next 0.3 s (one stretch: no pause among them). The beeps are a
    /// second apart: compared within one. `captures` are named (member or path) in what a failed check says.
    public static func beepSpread(
        _ captures: [(name: String, capture: FIFOCapture)], between from: Int64, and to: Int64,
        bytesPerSecond rate: Double = 192_000, file: StaticString = #filePath, line: UInt = #line
    ) throws -> Double {
        var heard: [Double] = []
        for (name, capture) in captures {
            let reads = capture.reads.filter { $0.arrival > from && $0.arrival < to }
            // The last stretch: after the last silence of 200 ms or more.
            let gap = reads.indices.dropFirst().last { reads[$0].arrival - reads[$0 - 1].arrival > 200_000_000 }
            let stretch = Array(reads[(gap ?? 0)...])
            let first = (gap.map { reads[$0 - 1].total } ?? stretch.first?.total ?? 0) + Int(rate) / 2
            let onset = try XCTUnwrap(
                Capture.beepOnset(in: capture.bytes, from: first), "\(name): no beep", file: file, line: line)
            let near = stretch.filter { $0.total > onset && $0.total < onset + Int(rate * 0.3) }
            XCTAssertGreaterThan(
                near.count, 5, "\(name): the beep at \(onset) came at the end of the stretch", file: file, line: line)
            let start = near.map { Double($0.arrival) / 1e9 - Double($0.total) / rate }.min() ?? 0
            heard.append(start + Double(onset) / rate)
        }
        let apart = heard.map { (($0 - heard[0]) + 0.5).truncatingRemainder(dividingBy: 1) - 0.5 }
        return apart.max()! - apart.min()!
    }
}
