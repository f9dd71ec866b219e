import CastProtocol
import Foundation
import XCTest

/// The hostile media corpus (`scripts/hostile-media`: 110 damaged files) sent one by one to a real castd on
/// loopback (no window, no sound: the engine still demuxes and decodes everything). Each send ends by itself, with
/// no `cast stop`, within a generous bound: in a played clip (exit 0, the last event a `playbackEnded` finish) or a
/// `playbackError` (exit 1); castd never dies, and its memory after the run is within 20 MB of before (after a
/// warm-up send). See docs/faults.md.
final class HostileMediaTests: XCTestCase {
    private var daemon: Daemon!
    private var port: UInt16 = 0
    private var work: String!

    /// Files whose timestamps declare a timeline of days (video frames 40000 s apart; audio 100000 s after the
    /// video): the engine takes such jumps out (PresentationTimeline), so they play their 1 s of frames and end.
    private static let longTimelines: Set<String> = ["ts-huge-pts.mp4", "ts-negative.mkv"]
    /// Far more than any file of the corpus needs (a clip of 1 s, or 10 s for ts-backwards.mkv): only a hang
    /// reaches it.
    private static let bound = 40.0

    override func setUpWithError() throws {
        work = NSTemporaryDirectory() + "cast-hostile-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        daemon = try Daemon(
            [
                Paths.castd, "--name", "Hostile", "--auth", "none", "--port", "0", "--listen", "127.0.0.1",
                "--no-advertise", "--video-out", "none", "--audio-device", "none", "--state-dir", "\(work!)/state",
                "--events", "\(work!)/events.jsonl",
            ], environment: [:])
        port = try daemon.listeningPort()
    }

    override func tearDown() {
        daemon?.stop()
        if let work { try? FileManager.default.removeItem(atPath: work) }
    }

    private func cast(_ arguments: [String], timeout: Double = 30) throws -> CommandResult {
        try runCommand([Paths.cast] + arguments, environment: ["XDG_CONFIG_HOME": "\(work!)/sender"], timeout: timeout)
    }

    func testEveryDamagedFileEndsInPlayOrPlaybackErrorAndCastdStaysUpAndFlat() throws {
        let corpus = "\(work!)/corpus"
        let made = try runCommand(
            [Paths.package.appendingPathComponent("scripts/hostile-media").path, corpus], timeout: 120)
        XCTAssertEqual(made.status, 0, made.stderr)
        let files = try FileManager.default.contentsOfDirectory(atPath: corpus).sorted()
        XCTAssertEqual(files.count, 110)
        let target = "127.0.0.1:\(port)"

        let warmUp = try cast(["send", try Media.clip("hostile-warm-up.mp4", seconds: 1), "--to", target])
        XCTAssertEqual(warmUp.status, 0, warmUp.stderr)
        let before = try residentKilobytes(daemon.pid)
        let start = Date()
        var played: [String] = []
        var errored: [String] = []
        var slowest = (name: "", seconds: 0.0)
        var longTimelineSeconds: [String: Double] = [:]
        for name in files {
            let path = "\(corpus)/\(name)"
            // `cast send` returns when castd reports the finish; past the bound it is killed, and castd drops the
            // session of a vanished sender, so the next file still gets an idle receiver.
            let result = try cast(["send", path, "--to", target, "--json"], timeout: Self.bound)
            if result.seconds > slowest.seconds { slowest = (name, result.seconds) }
            if Self.longTimelines.contains(name) { longTimelineSeconds[name] = result.seconds }
            let last = result.stdout.split(separator: "\n").last.flatMap {
                try? JSONDecoder().decode(PlaybackEvent.self, from: Data($0.utf8))
            }
            if result.seconds >= Self.bound {
                XCTFail("\(name) did not end by itself within \(Self.bound) s: \(result.stdout.suffix(300))")
                continue
            }
            switch (result.status, last) {
            case (0, .finished(.playbackEnded, _, _)?):
                played.append(name)
            case (1, .finished(.playbackError, _, _)?):
                errored.append(name)
            default:
                XCTFail("\(name): exit \(result.status), last event \(String(describing: last)): \(result.stderr)")
            }
            XCTAssertTrue(daemon.isRunning, "castd died on \(name): \(daemon.output.suffix(10))")
            if !daemon.isRunning { return }
        }
        XCTAssertEqual(Set(longTimelineSeconds.keys), Self.longTimelines, "the corpus no longer has these files")
        for (name, seconds) in longTimelineSeconds.sorted(by: { $0.key < $1.key }) {
            print("hostile media: \(name) took \(String(format: "%.1f", seconds)) s")
            XCTAssertTrue(played.contains(name), "\(name) should play to its end, not fail")
        }
        let after = try residentKilobytes(daemon.pid)
        print(
            "hostile media: \(played.count) played, \(errored.count) playbackError, in "
                + "\(String(format: "%.0f", Date().timeIntervalSince(start))) s (slowest \(slowest.name), "
                + "\(String(format: "%.1f", slowest.seconds)) s); castd VmRSS \(before) kB before, \(after) kB after")
        XCTAssertEqual(played.count + errored.count, 110)
        XCTAssertLessThan(after - before, 20 * 1024, "castd grew from \(before) kB to \(after) kB")

        // Still serving: a good clip plays.
        let good = try cast(["send", try Media.clip("hostile-warm-up.mp4", seconds: 1), "--to", target])
        XCTAssertEqual(good.status, 0, good.stderr)
    }

    private func residentKilobytes(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try XCTUnwrap(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        return try XCTUnwrap(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }
}
