import CastProtocol
import Foundation
import XCTest

/// Buffering over a slow link: the phone's sending side of the lab link is limited with `tc tbf` below the clip's
/// bit rate, `cast send` serves the clip from the phone, castd on the box plays it. The engine must stall (or wait
/// before it starts, where it can judge the link too slow), say so
/// (`loadState [stalled]`, `interrupted`), resume by itself (`playing`), present every frame, and report the stalls,
/// the bytes and the duration watched in its access log.
final class BufferingTests: XCTestCase {
    private var lab: Lab!
    private var work: String!

    override func setUpWithError() throws {
        lab = try Lab("e2b\(getpid() % 100000)")
        work = NSTemporaryDirectory() + "cast-buffering-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
    }

    override func tearDown() {
        lab?.tearDown()
        if let work { try? FileManager.default.removeItem(atPath: work) }
    }

    /// A 6 s clip of about 1.3 Mbit/s (noise keeps x264 from compressing it), tagged, with its index first
    /// (`+faststart`, as files meant for streaming are), so that it is read once from start to end.
    private func heavyClip() throws -> String {
        let path = Media.folder.appendingPathComponent("heavy.mp4").path
        if FileManager.default.fileExists(atPath: path) { return path }
        let result = try runCommand(
            [
                "ffmpeg", "-v", "error", "-y",
                "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=6,noise=alls=30:allf=t",
                "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=6",
                "-c:v", "libx264", "-pix_fmt", "yuv420p", "-g", "25", "-b:v", "1200k", "-maxrate", "1200k",
                "-bufsize", "600k", "-c:a", "aac", "-movflags", "+faststart",
                "-metadata", "title=Stall Test", "-metadata", "artist=Cast Lab", path,
            ], timeout: 60)
        guard result.status == 0 else { throw Media.MediaError(message: "ffmpeg failed: \(result.stderr)") }
        return path
    }

    private func events(_ lines: [String]) throws -> [PlaybackEvent] {
        try lines.filter { $0.hasPrefix("{") }.map { try JSONDecoder().decode(PlaybackEvent.self, from: Data($0.utf8)) }
    }

    /// `stalled` → `interrupted` → (a load state without `stalled`) → `playing`, in that order, at least once.
    private func assertStallOrder(_ events: [PlaybackEvent], _ label: String, line: UInt = #line) {
        guard
            let stalled = events.firstIndex(where: {
                if case .loadState(let l) = $0 { l.contains(.stalled) } else { false }
            })
        else { return XCTFail("\(label): no stalled load state in \(events)", line: line) }
        let rest = events[stalled...]
        guard let interrupted = rest.firstIndex(of: .playbackState(.interrupted)) else {
            return XCTFail("\(label): no interrupted after stalled", line: line)
        }
        guard
            let refilled = events[interrupted...].firstIndex(where: {
                if case .loadState(let l) = $0 { l.contains(.playable) && !l.contains(.stalled) } else { false }
            })
        else { return XCTFail("\(label): the load state never left stalled", line: line) }
        guard events[refilled...].contains(.playbackState(.playing)) else {
            return XCTFail("\(label): no playing after the stall", line: line)
        }
        XCTAssertLessThan(stalled, interrupted, line: line)
    }

    /// Below the clip's rate, playback waits before it starts (a film of known size and duration, docs/protocol.md
    /// "Buffering") or stalls while it plays, or both; the access log counts the stalls after the start, not the wait.
    private func assertStallsLogged(_ events: [PlaybackEvent], _ log: AccessLogEntry, line: UInt = #line) {
        let playing = events.firstIndex(of: .playbackState(.playing)) ?? events.endIndex
        let afterStart = events[playing...].filter { $0 == .playbackState(.interrupted) }.count
        let waitedFirst = events[..<playing].contains(.playbackState(.interrupted))
        XCTAssertTrue(waitedFirst || afterStart > 0, "neither a wait nor a stall: \(events)", line: line)
        XCTAssertEqual(log.stalls, afterStart, line: line)
        XCTAssertEqual(log.stallDuration > 0, afterStart > 0, "\(log)", line: line)
    }

    /// An event in a few words for the test's log; nil for positions and buffered times.
    private static func brief(_ event: PlaybackEvent) -> String? {
        switch event {
        case .position, .buffered: nil
        case .loadState(let load): "loadState[\(load.wordList.joined(separator: ","))]"
        case .playbackState(let state): state.rawValue
        default: event.name
        }
    }

    func testSlowLinkStallsResumesAndPlaysEveryFrame() throws {
        let clip = try heavyClip()
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: clip)[.size] as? Int)
        let (receiver, _) = try lab.startRecordingReceiver(work: work)
        // 600 kbit/s from the phone: about half the clip's bit rate, so it cannot play through without stalling.
        try lab.shape(.phone, rate: "600kbit")

        let sender = try lab.start(
            on: .phone, [Paths.cast, "send", clip, "--to", "Living Room", "--json"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        // While it stalls, `cast status --json` (another sender) sees the load state and the buffered time.
        XCTAssertNotNil(sender.waitForLine(containing: #""stalled""#, timeout: 30), "\(sender.output)")
        let status = try lab.run(
            on: .phone, [Paths.cast, "status", "Living Room", "--json"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/other"])
        XCTAssertTrue(status.stdout.contains("\"playableDuration\""), status.stdout)
        XCTAssertTrue(status.stdout.contains("\"loadState\""), status.stdout)

        let exit = sender.waitForExit(timeout: 60)
        XCTAssertEqual(exit, 0, "\(sender.output)")
        let sent = try events(sender.output)
        XCTAssertEqual(sent.last, .finished(reason: .playbackEnded, error: nil))
        assertStallOrder(sent, "cast send --json")
        let logged = try events(
            String(contentsOfFile: "\(work!)/events.jsonl", encoding: .utf8).split(separator: "\n").map(String.init))
        assertStallOrder(logged, "castd --events")

        // Every frame, bit-exact: a stall holds frames back, it never drops them.
        let frames = Media.comparable(try String(contentsOfFile: "\(work!)/frames.md5", encoding: .utf8))
        XCTAssertEqual(frames, try Media.ffmpegFrameMD5(clip))
        XCTAssertEqual(frames.filter { !$0.hasPrefix("#") }.count, 150)

        // The tags, the buffered time, and the access log.
        let metadata = sent.compactMap { event -> TimedMetadata? in if case .metadata(let m) = event { m } else { nil }
        }
        .first
        XCTAssertEqual(metadata?.items["title"], "Stall Test", "\(sent)")
        XCTAssertEqual(metadata?.items["artist"], "Cast Lab", "\(sent)")
        XCTAssertTrue(sent.contains { if case .buffered = $0 { true } else { false } }, "\(sent)")
        let log = try XCTUnwrap(
            sent.compactMap { event -> AccessLogEntry? in if case .accessLog(let l) = event { l } else { nil } }.last,
            "\(sent)")
        let loggedLog = logged.compactMap { event -> AccessLogEntry? in
            if case .accessLog(let l) = event { l } else { nil }
        }
        XCTAssertEqual(loggedLog.last, log)
        assertStallsLogged(sent, log)
        XCTAssertEqual(log.bytesTransferred, Int64(size))
        XCTAssertEqual(log.durationWatched, 6, accuracy: 0.6)
        XCTAssertEqual(log.uri, (clip as NSString).lastPathComponent)
        XCTAssertTrue(log.serverAddress?.hasPrefix(lab.address(.phone)) ?? false, "\(log)")
        XCTAssertLessThan(try XCTUnwrap(log.observedBitrate), 700_000, "\(log)")
        XCTAssertGreaterThan(try XCTUnwrap(log.indicatedBitrate), 1_000_000, "\(log)")
        let stalls = sent.filter { $0 == .playbackState(.interrupted) }.count
        print(
            "tbf 600kbit: \(stalls) stalls, \(String(format: "%.2f", log.stallDuration)) s stalled, "
                + "start-up \(String(format: "%.2f", log.startupTime ?? -1)) s, watched \(String(format: "%.2f", log.durationWatched)) s, "
                + "\(log.bytesTransferred) of \(size) bytes, observed \(Int(log.observedBitrate ?? 0)) bit/s; "
                + "order: \(sent.compactMap(Self.brief).joined(separator: ", "))")
        _ = receiver
    }

    /// The same over an http URL the receiver opens itself: no read-ahead source, the rate is FFmpeg's bytes read
    /// over the time spent in reads.
    func testSlowURLStallsAndResumes() throws {
        let clip = try heavyClip()
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: clip)[.size] as? Int)
        _ = try lab.startRecordingReceiver(work: work)
        let base = try lab.serveOnPhone()
        try lab.shape(.phone, rate: "600kbit")

        let url = "\(base)/heavy.mp4"
        let result = try lab.run(
            on: .phone, [Paths.cast, "send", url, "--to", "Living Room", "--json"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"], timeout: 60)
        XCTAssertEqual(result.status, 0, result.stderr)
        let sent = try events(result.stdout.split(separator: "\n").map(String.init))
        XCTAssertEqual(sent.last, .finished(reason: .playbackEnded, error: nil))
        assertStallOrder(sent, "cast send URL --json")
        let frames = Media.comparable(try String(contentsOfFile: "\(work!)/frames.md5", encoding: .utf8))
        XCTAssertEqual(frames, try Media.ffmpegFrameMD5(clip))

        let log = try XCTUnwrap(
            sent.compactMap { event -> AccessLogEntry? in if case .accessLog(let l) = event { l } else { nil } }.last,
            "\(sent)")
        assertStallsLogged(sent, log)
        XCTAssertEqual(log.uri, url)
        XCTAssertEqual(log.serverAddress, String(base.dropFirst("http://".count)))
        // FFmpeg reads the file once from start to end (its index is first).
        XCTAssertEqual(log.bytesTransferred, Int64(size))
        XCTAssertEqual(log.durationWatched, 6, accuracy: 0.6)
        XCTAssertLessThan(try XCTUnwrap(log.observedBitrate), 700_000, "\(log)")
        print(
            "tbf 600kbit, URL: \(log.stalls) stalls, \(String(format: "%.2f", log.stallDuration)) s stalled, "
                + "start-up \(String(format: "%.2f", log.startupTime ?? -1)) s, \(log.bytesTransferred) of \(size) bytes, "
                + "observed \(Int(log.observedBitrate ?? 0)) bit/s; order: \(sent.compactMap(Self.brief).joined(separator: ", "))"
        )
    }
}
