import CastProtocol
import Foundation
import XCTest

/// `cast seek` and `cast volume` against a playing receiver in the lab: the frame after an exact
/// seek is ffmpeg's frame at that time; the level of the audio that reaches ALSA follows the volume.
final class SeekAndVolumeTests: XCTestCase {
    func testSeekLandsOnTheFrameAndVolumeScalesTheAudio() throws {
        let lab = try Lab("e2v\(getpid() % 100000)")
        defer { lab.tearDown() }
        let work = NSTemporaryDirectory() + "cast-seek-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let receiver = try lab.start(
            on: .box,
            [
                Paths.castd, "--name", "Living Room", "--auth", "none", "--state-dir", "\(work)/state",
                "--video-out", "framemd5:\(work)/frames.md5", "--audio-device", "castcapture:FILE=\(work)/audio.raw",
                "--events", "\(work)/events.jsonl",
            ],
            environment: ["ALSA_CONFIG_PATH": Media.alsaConfig])
        XCTAssertNotNil(receiver.waitForLine(containing: "advertised as"))
        // 48 kHz audio: the capture chain then needs no rate conversion, so levels compare sample for sample.
        let clip = try Media.clip("seek.mp4", seconds: 20, extra: ["-ar", "48000"])
        let env = ["XDG_CONFIG_HOME": "\(work)/sender"]
        let sender = try lab.start(
            on: .phone, [Paths.cast, "send", clip, "--to", "Living Room", "--json"], environment: env)
        XCTAssertNotNil(sender.waitForLine(containing: #""position":1."#, timeout: 15), "\(sender.output)")

        let seek = try lab.run(on: .phone, [Paths.cast, "seek", "living room", "12.36"], environment: env)
        XCTAssertEqual(seek.status, 0, seek.stderr)
        XCTAssertTrue(seek.stdout.hasPrefix("position: 0:12"), seek.stdout)
        XCTAssertNotNil(sender.waitForLine(containing: #""state":"seekingForward""#, timeout: 5), "\(sender.output)")
        Thread.sleep(forTimeInterval: 0.5)
        // The first frame presented after the seek is the one ffmpeg shows at 12.36 s (pts 309 at 1/25).
        let presented = Media.comparable(try String(contentsOfFile: "\(work)/frames.md5", encoding: .utf8))
            .filter { !$0.hasPrefix("#") }
        let reference = try Media.ffmpegFrameMD5(clip).filter { !$0.hasPrefix("#") }
        let target = try XCTUnwrap(
            reference.first { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }[2] == "309" })
        let jump = try XCTUnwrap(
            presented.firstIndex { line in
                let pts = Int(line.split(separator: ",")[2].trimmingCharacters(in: .whitespaces)) ?? 0
                return pts > 100
            }, "no frame after the seek: \(presented.suffix(3))")
        XCTAssertEqual(presented[jump], target)

        // Volume: the level that reaches ALSA drops to a quarter.
        func peak(from offset: Int) throws -> Int {
            let data = try Data(contentsOf: URL(fileURLWithPath: "\(work)/audio.raw"))
            guard data.count > offset + 48000 else { return -1 }
            return data.withUnsafeBytes { raw in
                let samples = raw.bindMemory(to: Int16.self)
                return samples[(offset / 2)..<(offset / 2 + 24000)].map { abs(Int($0)) }.max() ?? 0
            }
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: "\(work)/audio.raw")).count
        let loud = try peak(from: before - 96000)
        let volume = try lab.run(on: .phone, [Paths.cast, "volume", "Living Room", "0.25"], environment: env)
        XCTAssertEqual(volume.stdout, "volume: 0.25\n", volume.stderr)
        XCTAssertNotNil(sender.waitForLine(containing: #""event":"volume""#, timeout: 5), "\(sender.output)")
        Thread.sleep(forTimeInterval: 1)
        let after = try Data(contentsOf: URL(fileURLWithPath: "\(work)/audio.raw")).count
        let quiet = try peak(from: after - 96000)
        XCTAssertEqual(Double(quiet) / Double(loud), 0.25, accuracy: 0.03, "peaks \(loud) → \(quiet)")
        let status = try lab.run(on: .phone, [Paths.cast, "status", "Living Room"], environment: env)
        XCTAssertTrue(status.stdout.contains("volume: 0.25"), status.stdout)
        XCTAssertEqual(try lab.run(on: .phone, [Paths.cast, "stop", "Living Room"], environment: env).status, 0)
        XCTAssertEqual(sender.waitForExit(timeout: 5), 0)
    }
}
