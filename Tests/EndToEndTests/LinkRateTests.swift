import CastProtocol
import Foundation
import XCTest

/// The buffering rule against the link's rate (docs/protocol.md, "Buffering"): over a lab link shaped below, above
/// and across the film's rate (`tc tbf`, `scripts/lab shape`), castd plays every frame, waits at most once where the
/// link is slower than the film, never where it is faster, and resumes by itself when the link comes back. Runs
/// alone (scripts/test's SERIAL): the stalls depend on what the link delivers in time.
///
/// The clips: 1.3 Mbit/s at 320×240 (noise keeps x264 from compressing them), the MP4 index at the end.
final class LinkRateTests: LabTestCase {
    override class var labPrefix: String { "links" }

    /// The film's average rate in bits per second (its size over its duration).
    private func filmRate(_ path: String, seconds: Double) throws -> Double {
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        return Double(size) * 8 / seconds
    }

    /// `cast status Living Room --json` from the phone while something plays: its `linkRate` (bits/s), if any.
    private func statusLinkRate() throws -> Double? {
        let status = try lab.run(
            on: .phone, [Paths.cast, "status", "Living Room", "--json"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        let object = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any], status.stderr)
        return (object["linkRate"] as? NSNumber)?.doubleValue
    }

    /// Waits until `cast send --json` printed a position of at least `seconds` (at most `timeout`).
    private func waitForPosition(_ play: LinkPlayInProgress, _ seconds: Double, timeout: Double = 60) -> Bool {
        play.sender.waitForLine(timeout: timeout) { line in
            guard line.hasPrefix("{"),
                case .position(let position, _)? = try? JSONDecoder().decode(PlaybackEvent.self, from: Data(line.utf8))
            else { return false }
            return position >= seconds
        } != nil
    }

    /// A link 1.5 times the film's rate: no stall, and done about when the film is (a generous bound here; the
    /// benchmark in docs/performance.md measures it).
    func testOnALinkFasterThanTheFilmNothingStalls() throws {
        let path = try linkClip("moov-last.mp4")
        let played = try playOverLink(path, rate: "1970kbit")
        XCTAssertEqual(played.stalls, 0, "\(played.events)")
        XCTAssertFalse(
            played.events.contains { if case .loadState(let l) = $0 { l.contains(.stalled) } else { false } })
        assertFetchedOnce(played)
        try assertFramesBitExact(path)
        XCTAssertLessThan(played.wall, 6 + 2 + 6, "media + 2 s, and time for the programs to start on a loaded machine")
    }

    /// A link at 60 % of the film's rate: one wait, before playback starts, long enough that the rest arrives in time,
    /// then no stall (a fixed 2 s refill stalled every few seconds; a start before the wait stalled at once, and now
    /// and then again); every frame, and the end. While it plays, the
    /// receiver reports the link's rate (`buffered`, `cast status`), and during the wait how long it expects to wait.
    func testOnALinkSlowerThanTheFilmItWaitsOnceAndThenPlaysThrough() throws {
        // 12 s: long enough that a fixed refill (2 s) runs dry again, twice or more.
        let path = try linkClip("moov-last-12s.mp4", seconds: 12)
        let rate = try filmRate(path, seconds: 12) * 0.6
        let play = try startPlayOverLink(path, rate: "\(Int(rate / 1000))kbit")
        // The wait before the start, timed from outside: from the first `interrupted` to the first `playing`.
        XCTAssertNotNil(play.sender.waitForLine(containing: "\"interrupted\"", timeout: 60))
        let waitBegan = Date()
        XCTAssertNotNil(play.sender.waitForLine(containing: "\"playing\"", timeout: 60))
        let waited = Date().timeIntervalSince(waitBegan)
        XCTAssertTrue(waitForPosition(play, 0.5), "\(play.sender.output.suffix(5))")
        let reported = try statusLinkRate()
        let played = try finishPlayOverLink(play)
        // The one wait comes before playback starts (stalled, interrupted, then the first `playing`), and no stall
        // follows it.
        let playing = try XCTUnwrap(played.events.firstIndex(of: .playbackState(.playing)), "\(played.events)")
        let wait = played.events[..<playing]
        XCTAssertEqual(
            played.events[playing...].filter { $0 == .playbackState(.interrupted) }.count, 0, "\(played.events)")
        XCTAssertTrue(wait.contains(.loadState(.stalled)), "no wait at the start: \(played.events)")
        XCTAssertEqual(played.log?.stalls, 0, "the wait at the start is no stall")
        // The access log's startupTime runs until playback started: the wait is in it (AVPlayer's startupTime).
        XCTAssertGreaterThan(waited, 2, "a wait of seconds")
        XCTAssertGreaterThanOrEqual(played.log?.startupTime ?? 0, waited - 0.5, "startupTime counts the wait")
        // The wait says how long it expects to last, and it ends with playthrough judged OK.
        XCTAssertTrue(
            wait.contains { if case .buffered(_, _, _, let wait?) = $0 { wait > 0 } else { false } }, "\(wait)")
        XCTAssertTrue(
            wait.contains { if case .loadState(let l) = $0 { l.contains(.playthroughOK) } else { false } }, "\(wait)")
        XCTAssertEqual(played.log.map { $0.durationWatched } ?? 0, 12, accuracy: 0.5)
        assertFetchedOnce(played)
        try assertFramesBitExact(path)
        // The link's rate as castd measures it: about the shaped rate (TLS and TCP take some), in `buffered` and in
        // `cast status`.
        let measured = try XCTUnwrap(played.linkRates.last, "no link rate in \(played.events)")
        XCTAssertGreaterThan(measured, rate * 0.5)
        XCTAssertLessThan(measured, rate * 1.5)
        let status = try XCTUnwrap(reported, "cast status shows no link rate")
        XCTAssertGreaterThan(status, rate * 0.25)
        XCTAssertLessThan(status, rate * 3)
        // size ÷ rate is 20 s: the goal is within 10 % (docs/performance.md measures it); here a hang bound.
        XCTAssertLessThan(played.wall, 20 * 1.1 + 15, "a wait that ends, and time for the programs to start")
    }

    /// A sender whose media connection goes silent while its control connection lives on (its packets held back by
    /// the phone's link): castd plays what it has, reports the stall, and finishes with `playbackError` and a clear
    /// message within the documented bound (15 s after the last byte, docs/protocol.md), not minutes later.
    func testASenderWhoseMediaGoesSilentStallsThenFailsWithinTheBound() throws {
        let path = try linkClip("moov-last-20s.mp4", seconds: 20)
        let rate = Int(try filmRate(path, seconds: 20) * 2 / 1000)
        _ = try lab.startRecordingReceiver(work: work)
        // The phone's link: everything in a class at twice the film's rate; a class of 8 bit/s for the media
        // connection once it is silenced (a filter on its port; this kernel has htb and u32, not netem or prio).
        try tc(["qdisc", "replace", "dev", "lab0", "root", "handle", "1:", "htb", "default", "10"])
        try tc(["class", "add", "dev", "lab0", "parent", "1:", "classid", "1:10", "htb", "rate", "\(rate)kbit"])
        try tc([
            "class", "add", "dev", "lab0", "parent", "1:", "classid", "1:20", "htb", "rate", "8bit", "ceil", "8bit",
        ])
        let play = try startPlayOverLink(path, rate: nil, receiverRuns: true)
        XCTAssertTrue(waitForPosition(play, 1), "\(play.sender.output.suffix(5))")
        let port = try mediaConnectionPort()
        try tc([
            "filter", "add", "dev", "lab0", "parent", "1:", "protocol", "ip", "prio", "1", "u32", "match", "ip",
            "sport",
            "\(port)", "0xffff", "flowid", "1:20",
        ])
        let silenced = Date()
        XCTAssertEqual(play.sender.waitForExit(timeout: 90), 1, "exit 1: a playback error")
        let after = Date().timeIntervalSince(silenced)
        let events = events(of: play)
        guard case .finished(.playbackError, let error?, _)? = events.last else {
            return XCTFail("no playbackError: \(events.suffix(5))")
        }
        XCTAssertTrue(error.contains("sent no media for 15"), error)
        // What was buffered played first, then the stall was reported as one.
        let stall = try XCTUnwrap(events.firstIndex(of: .loadState(.stalled)), "\(events)")
        XCTAssertEqual(events.dropFirst(stall + 1).first, .playbackState(.interrupted))
        // 15 s after the last byte, a few seconds of the film before it, and a loaded machine.
        XCTAssertLessThan(after, 15 + 15, "the silence noticed within its bound")
    }

    /// Runs `tc ARGUMENTS` in the phone's namespace.
    private func tc(_ arguments: [String]) throws {
        let result = try lab.run(on: .phone, ["tc"] + arguments)
        XCTAssertEqual(result.status, 0, "tc \(arguments.joined(separator: " ")): \(result.stderr)")
    }

    /// The phone's local port of the media connection: of its connections to castd, the one that sent the most.
    private func mediaConnectionPort() throws -> Int {
        let lines = try lab.run(on: .phone, ["ss", "-tni"]).stdout.split(separator: "\n").map(String.init)
        var best: (port: Int, sent: Int)?
        var port: Int?
        for line in lines {
            if line.hasPrefix("ESTAB") {
                port = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(3).first
                    .flatMap { $0.split(separator: ":").last }.flatMap { Int($0) }
            } else if let range = line.range(of: "bytes_sent:"), let port {
                let sent = Int(line[range.upperBound...].prefix { $0.isNumber }) ?? 0
                if sent > best?.sent ?? -1 { best = (port, sent) }
            }
        }
        return try XCTUnwrap(best?.port, "no connection in \(lines)")
    }

    /// A link twice the film's rate that drops to a tenth for ten seconds while it plays: the film goes on or stalls
    /// honestly (`interrupted`, `[stalled]`), resumes by itself once the link is back, and no frame is lost.
    func testALinkThatDropsToATenthForTenSecondsResumesByItself() throws {
        let path = try linkClip("moov-last-20s.mp4", seconds: 20)
        let rate = try filmRate(path, seconds: 20) * 2
        let play = try startPlayOverLink(path, rate: "\(Int(rate / 1000))kbit")
        XCTAssertTrue(waitForPosition(play, 1), "\(play.sender.output.suffix(5))")
        try lab.shape(.phone, rate: "\(Int(rate / 10_000))kbit")
        // The link's drop is the test's input: ten seconds of it.
        Thread.sleep(forTimeInterval: 10)
        try lab.shape(.phone, rate: "\(Int(rate / 1000))kbit")
        let played = try finishPlayOverLink(play, timeout: 120)
        // Every stall was reported as one and ended by itself (no control was sent).
        let states = played.events.compactMap { event -> PlaybackState? in
            if case .playbackState(let state) = event { state } else { nil }
        }
        for (index, state) in states.enumerated() where state == .interrupted {
            XCTAssertEqual(states.dropFirst(index + 1).first, .playing, "\(states)")
        }
        let stalledReports = played.events.filter { $0 == .loadState(.stalled) }.count
        XCTAssertEqual(stalledReports, played.stalls, "each stall says [stalled]")
        assertFetchedOnce(played)
        try assertFramesBitExact(path)
        XCTAssertLessThan(played.wall, 20 + 10 + 30, "the film, the drop, and a generous hang bound")
    }
}
