import CastProtocol
import Foundation
import XCTest

/// What one play over the lab's shaped link came to (LinkTests, LinkRateTests): judged from the phone's interface
/// counters, outside both programs, and from the events `cast send --json` printed.
struct LinkPlay {
    /// Bytes that left the phone's lab0, and the packets they were in.
    var bytes: Int64
    var packets: Int64
    var size: Int64
    var events: [PlaybackEvent]
    /// Seconds from `cast send` spawned to its exit.
    var wall: Double
    var status: Int32

    /// TCP payload (TLS records of both connections): the interface's bytes less each packet's Ethernet, IPv4
    /// and TCP headers (14 + 20 + 32 with timestamps), which are on the link whatever the receiver asks for.
    var payloadRatio: Double { Double(bytes - 66 * packets) / Double(size) }
    var ratio: Double { Double(bytes) / Double(size) }
    var stalls: Int { events.filter { $0 == .playbackState(.interrupted) }.count }
    var log: AccessLogEntry? {
        events.compactMap { event -> AccessLogEntry? in if case .accessLog(let l) = event { l } else { nil } }.last
    }
    /// The expected waits the receiver reported during stalls (`buffered`'s `wait`).
    var waits: [Double] {
        events.compactMap { event -> Double? in if case .buffered(_, _, _, let wait) = event { wait } else { nil } }
    }
    /// The link rates the receiver reported (`buffered`'s `linkRate`, bits/s).
    var linkRates: [Double] {
        events.compactMap { event -> Double? in if case .buffered(_, _, let rate, _) = event { rate } else { nil } }
    }
}

/// A play started over the link, not finished yet.
struct LinkPlayInProgress {
    var sender: Daemon
    var path: String
    var rate: String?
    var bytes: Int64
    var packets: Int64
    var started: Date
}

extension LabTestCase {
    /// A clip of `seconds` (6 by default) of about 1.3 Mbit/s at 320×240 (noise keeps x264 from compressing it), with
    /// `extra` options; the container is the name's.
    func linkClip(_ name: String, _ extra: [String] = [], seconds: Int = 6) throws -> String {
        let path = Media.folder.appendingPathComponent("link-\(name)").path
        if FileManager.default.fileExists(atPath: path) { return path }
        let result = try runCommand(
            [
                "ffmpeg", "-v", "error", "-y",
                "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=\(seconds),noise=alls=30:allf=t",
                "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=\(seconds)",
                "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-g", "25", "-b:v", "1200k",
                "-maxrate", "1200k", "-bufsize", "600k", "-c:a", "aac",
            ] + extra + [path], timeout: 120)
        guard result.status == 0 else { throw Media.MediaError(message: "ffmpeg failed: \(result.stderr)") }
        return path
    }

    /// 6 s of stereo noise at 48 kHz in FLAC (noise does not compress: about 1.5 Mbit/s).
    func linkFLAC() throws -> String {
        let path = Media.folder.appendingPathComponent("link-noise.flac").path
        if FileManager.default.fileExists(atPath: path) { return path }
        let result = try runCommand(
            [
                "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
                "anoisesrc=sample_rate=48000:duration=6:amplitude=0.5",
                "-ac", "2", "-c:a", "flac", path,
            ], timeout: 60)
        guard result.status == 0 else { throw Media.MediaError(message: "ffmpeg failed: \(result.stderr)") }
        return path
    }

    /// One of the phone's lab0 counters (`tx_bytes`, `tx_packets`).
    func phoneCounter(_ name: String) throws -> Int64 {
        let result = try lab.run(on: .phone, ["cat", "/sys/class/net/lab0/statistics/\(name)"])
        return try XCTUnwrap(Int64(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), result.stderr)
    }

    /// Starts castd recording on the box (unless it runs already), limits the phone's link to `rate` (nil: as the
    /// test set it up), and starts `cast send path --json` on the phone.
    func startPlayOverLink(_ path: String, rate: String?, receiverRuns: Bool = false) throws -> LinkPlayInProgress {
        if !receiverRuns { _ = try lab.startRecordingReceiver(work: work) }
        if let rate { try lab.shape(.phone, rate: rate) }
        let (bytes, packets) = (try phoneCounter("tx_bytes"), try phoneCounter("tx_packets"))
        // The wall time runs from the spawn of `cast send` to its exit.
        let started = Date()
        let sender = try lab.start(
            on: .phone, [Paths.cast, "send", path, "--to", "Living Room", "--json"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        return LinkPlayInProgress(
            sender: sender, path: path, rate: rate, bytes: bytes, packets: packets, started: started)
    }

    /// Waits (at most `timeout` s) for the play to end and says what it came to; the finish must be `playbackEnded`.
    func finishPlayOverLink(_ play: LinkPlayInProgress, timeout: Double = 180) throws -> LinkPlay {
        let status = play.sender.waitForExit(timeout: timeout)
        let wall = Date().timeIntervalSince(play.started)
        XCTAssertEqual(status, 0, "cast send: \(play.sender.output.suffix(5))")
        let events = try play.sender.output.filter { $0.hasPrefix("{") }
            .map { try JSONDecoder().decode(PlaybackEvent.self, from: Data($0.utf8)) }
        XCTAssertEqual(events.last, .finished(reason: .playbackEnded, error: nil))
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: play.path)[.size] as? Int)
        let played = LinkPlay(
            bytes: try phoneCounter("tx_bytes") - play.bytes, packets: try phoneCounter("tx_packets") - play.packets,
            size: Int64(size), events: events, wall: wall, status: status ?? -1)
        print(
            "\((play.path as NSString).lastPathComponent) over \(play.rate ?? "the link"): \(played.bytes) bytes in "
                + "\(played.packets) packets for a file of \(size): \(String(format: "%.3f", played.ratio))× on the "
                + "link, \(String(format: "%.3f", played.payloadRatio))× TCP payload, castd fetched "
                + "\(played.log?.bytesFetched.map(String.init) ?? "?"), \(played.stalls) stalls, "
                + "\(String(format: "%.1f", wall)) s, expected waits \(played.waits)")
        return played
    }

    /// The events `cast send --json` printed so far.
    func events(of play: LinkPlayInProgress) -> [PlaybackEvent] {
        play.sender.output.filter { $0.hasPrefix("{") }
            .compactMap { try? JSONDecoder().decode(PlaybackEvent.self, from: Data($0.utf8)) }
    }

    /// Plays `path` from the phone over a link of `rate` to castd recording on the box.
    func playOverLink(_ path: String, rate: String) throws -> LinkPlay {
        try finishPlayOverLink(try startPlayOverLink(path, rate: rate))
    }

    /// The link carried the file once: TCP payload at most 1.05× the file, castd's own count exactly the file, and
    /// the access log says both.
    func assertFetchedOnce(_ played: LinkPlay, line: UInt = #line) {
        XCTAssertLessThanOrEqual(played.payloadRatio, 1.05, line: line)
        XCTAssertEqual(played.log?.mediaSize, played.size, line: line)
        XCTAssertEqual(played.log?.bytesFetched, played.size, "castd fetched each byte once", line: line)
    }

    /// Every frame castd presented is ffmpeg's decode of `path`, bit for bit.
    func assertFramesBitExact(_ path: String, line: UInt = #line) throws {
        let frames = Media.comparable(try String(contentsOfFile: "\(work!)/frames.md5", encoding: .utf8))
        XCTAssertEqual(frames, try Media.ffmpegFrameMD5(path), line: line)
    }
}
