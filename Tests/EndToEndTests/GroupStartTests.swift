import CastBase
import CastTestSupport
import Foundation
import XCTest

/// A group in step from its first second (issue 31): three castd on three hosts of the lab, each in a time namespace of
/// its own (CLOCK_MONOTONIC 3, 7 and 11 s ahead), play one file sent with `cast send FILE --to A --to B --to C`, and
/// how far apart they wrote the same samples is measured window by window from the stream's first byte
/// (`WriteSkew`: each member's least `arrival − bytes / rate` over the reads of a quarter second of the stream; no fit
/// across the start). `scripts/bench-group-start` runs these N times and prints the figures.
///
/// `CAST_GROUP_START_SECONDS` (10 to 600) plays longer.
final class GroupStartTests: LabTestCase {
    override class var labPrefix: String { "gs" }
    override class var labRooms: Int { 3 }

    /// Bytes per second of the capture: S16 stereo at 48 kHz.
    private let rate = 192_000.0

    /// The members over the lab's plain links.
    func testTheFirstSecondIsInStepOnThePlainLink() throws {
        try measureStart(link: "plain link", jitter: false)
    }

    /// The members each behind `scripts/jitter-relay` (every chunk of each direction held 1 to 8 ms at random, the two
    /// directions drawn apart), so that the clock exchanges and the scheduled start cross it.
    func testTheFirstSecondIsInStepOverAJitteryRelay() throws {
        try measureStart(link: "1-8 ms jitter each way", jitter: true)
    }

    /// The kitchen's clock 100 ppm fast and the living room's 100 ppm slow (`CAST_TEST_CLOCK_SKEW_PPM`, test only),
    /// over the plain links: the rates are not known at the start.
    func testTheFirstSecondIsInStepWithClocksDriftingApart() throws {
        try measureStart(link: "clocks 200 ppm apart", jitter: false, skews: [100, -100, 0])
    }

    private func measureStart(link: String, jitter: Bool, skews: [Int] = [0, 0, 0]) throws {
        try requireTimeNamespaces()
        let length = min(max(Int(ProcessInfo.processInfo.environment["CAST_GROUP_START_SECONDS"] ?? "") ?? 12, 10), 600)
        let rooms = try zip([("Kitchen", Lab.Host.room1, 3), ("Living Room", .room2, 7), ("Study", .room3, 11)], skews)
            .map { try startCapturingRoom($0.0, on: $0.1, folder: "\($0.2)", shift: $0.2, skew: $1) }
        let targets = try zip(rooms, [Lab.Host.room1, .room2, .room3]).enumerated().map { index, pair in
            let target = "\(lab.address(pair.1)):\(pair.0.port)"
            return jitter ? try startJitterRelay(to: target, seed: index + 1) : target
        }
        let clip = try beeps(seconds: length)
        let sender = try lab.start(
            on: .phone, [Paths.cast, "send", clip] + targets.flatMap { ["--to", $0] },
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        XCTAssertEqual(sender.waitForExit(timeout: Double(length) + 90), 0, "\(sender.output)")
        XCTAssertTrue(sender.output.contains("finished: playbackEnded"), "\(sender.output)")
        let reads = rooms.map { $0.capture.stop(atLeast: Int(rate) * length) }
        for (room, member) in zip(rooms, reads) {
            XCTAssertEqual(
                Double(member.last?.total ?? 0) / rate, Double(length), accuracy: 0.1, "\(room.daemon.output)")
        }
        let windows = WriteSkew.windows(reads, bytesPerSecond: rate)
        XCTAssertGreaterThan(windows.count, (length - 1) * 4 - 2, "windows every member covered")
        let first = try XCTUnwrap(WriteSkew.quantiles(windows, in: 0..<1), "no window in the first second")
        let early = WriteSkew.quantiles(windows, in: 1..<5)
        let later = WriteSkew.quantiles(windows, in: 5..<Double(length))
        let whole = try XCTUnwrap(WriteSkew.quantiles(windows, in: 0..<Double(length)))
        print(
            "group start skew, \(link), \(length) s: first second \(first.text); 1-5 s \(early?.text ?? "none"); "
                + "after 5 s \(later?.text ?? "none"); whole \(whole.text)")
        print(
            "group start skew, \(link), each window (ms): "
                + windows.map { String(format: "%.3f", $0.skew * 1000) }.joined(separator: " "))
        // Each member's first reads against its least lateness of the first second: where the start itself stands.
        for (index, member) in reads.enumerated() {
            let start = windows.prefix(4).map { $0.lateness[index] }.min() ?? 0
            let firsts = member.prefix(8).map {
                String(format: "%.3f", (Double($0.arrival) / 1e9 - Double($0.total) / rate - start) * 1000)
            }
            print(
                "group start, \(link), member \(index + 1)'s first reads' lateness (ms): \(firsts.joined(separator: " "))"
            )
        }
        // A window far off the rest: each member's reads in it (lateness against the member's least of the whole play,
        // bytes of the read), to tell a member that wrote late from a reader that read late.
        for window in windows where window.skew > 0.0005 {
            for (index, member) in reads.enumerated() {
                let least = member.map { Double($0.arrival) / 1e9 - Double($0.total) / rate }.min() ?? 0
                let inside = member.filter {
                    Double($0.total) / rate > window.start && Double($0.total) / rate <= window.start + 0.25
                }
                var previous = member.last { Double($0.total) / rate <= window.start }?.total ?? 0
                let text = inside.map { read -> String in
                    defer { previous = read.total }
                    return String(
                        format: "%.3f/%d", (Double(read.arrival) / 1e9 - Double(read.total) / rate - least) * 1000,
                        read.total - previous)
                }
                print(
                    String(
                        format: "group start, %@, window at %.2f s, member %d (ms/bytes): ", link, window.start,
                        index + 1)
                        + text.joined(separator: " "))
            }
        }
        // Hang and regression bounds, not the goal (0.5 ms at p99 on the plain link, 1 ms over the relay: a benchmark
        // figure in docs/multiroom.md): the machine is shared.
        XCTAssertLessThan(first.max, 0.003, "the first second: \(windows.prefix(4).map(\.skew))")
        XCTAssertLessThan(whole.p50, 0.001, "\(windows.map(\.skew))")
    }
}
