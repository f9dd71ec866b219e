import CastMedia
import CastProtocol
import CastTestSupport
import Foundation
import XCTest

/// Surround sources through the engine to a captured ALSA device: downmixed to stereo as `ffmpeg -ac 2` does, played
/// as they are on a device with their channels, and never silence where the source has sound (the level is held to
/// ffmpeg's own decode and downmix).
final class DownmixTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws { folder = try Fixtures.folder() }
    override func tearDown() { if let folder { try? FileManager.default.removeItem(at: folder) } }

    /// Films keep dialogue on the front-centre channel: each file has its only signal there. Before the engine
    /// downmixed, ALSA's plug kept the first two channels of six and the device got digital zeros.
    func testFrontCentreOfSurroundFilesReachesAStereoDeviceAtFFmpegsDownmixLevel() throws {
        let centreOnly51 = "aevalsrc=0|0|0.4*sin(2*PI*440*t)|0|0|0:c=5.1:s=48000:d=1"
        let centreOnly71 = "aevalsrc=0|0|0.4*sin(2*PI*440*t)|0|0|0|0|0:c=7.1:s=48000:d=1"
        let files: [(name: String, source: String, codec: [String])] = [
            ("aac51.mp4", centreOnly51, ["-c:a", "aac"]),
            ("ac351.ts", centreOnly51, ["-c:a", "ac3"]),
            ("flac71.mkv", centreOnly71, ["-c:a", "flac"]),
            ("opus51.mkv", centreOnly51, ["-c:a", "libopus"]),
            // PCM in Matroska carries a channel count and no layout: FFmpeg reports the order as unspecified.
            ("unspecified6.mkv", centreOnly51, ["-c:a", "pcm_s16le"]),
        ]
        for file in files {
            let path = folder.appendingPathComponent(file.name).path
            try Fixtures.run("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", file.source] + file.codec + [path])
            let raw = folder.appendingPathComponent(file.name + ".raw").path
            let (log, _) = try play(try FileSource(path: path), audio: .alsa(device: Fixtures.captureDevice(raw)))
            XCTAssertEqual(log.finish?.reason, .playbackEnded, "\(file.name): \(log.events)")
            let played = Capture(try Data(contentsOf: URL(fileURLWithPath: raw)), channels: 2)
            let reference = Capture(
                try Fixtures.run(
                    "ffmpeg", ["-v", "error", "-i", path, "-ac", "2", "-ar", "48000", "-f", "s16le", "-"]),
                channels: 2)
            print("\(file.name): played \(played.summary), ffmpeg \(reference.summary)")
            XCTAssertGreaterThan(reference.rms(channel: 0), 1000, "\(file.name): the reference is loud")
            XCTAssertEqual(Double(played.frames), Double(reference.frames), accuracy: 48_000 * 0.05, file.name)
            for channel in 0..<2 {
                XCTAssertEqual(
                    played.decibels(channel: channel, relativeTo: reference), 0, accuracy: 1,
                    "\(file.name) channel \(channel): \(played.summary) vs \(reference.summary)")
            }
        }
    }

    /// A different level on each speaker of 5.1(side) (FL FR FC LFE SL SR), in FLAC.
    private static let sideAmplitudes = [0.05, 0.1, 0.2, 0.15, 0.25, 0.3]

    /// Plays `sideAmplitudes` as 5.1(side) on a six-channel `device` capturing into `raw`; what it captured.
    private func playSixChannels(device: String, raw: String) throws -> Capture {
        let expressions = Self.sideAmplitudes.enumerated().map { "\($1)*sin(2*PI*\(300 + 100 * $0)*t)" }
        let path = folder.appendingPathComponent("side51.mkv").path
        try Fixtures.run(
            "ffmpeg",
            [
                "-v", "error", "-y", "-f", "lavfi", "-i",
                "aevalsrc=\(expressions.joined(separator: "|")):c=5.1(side):s=48000:d=1", "-c:a", "flac", path,
            ])
        let (log, _) = try play(try FileSource(path: path), audio: .alsa(device: device), audioChannels: 6)
        XCTAssertEqual(log.finish?.reason, .playbackEnded, "\(log.events)")
        let played = Capture(try Data(contentsOf: URL(fileURLWithPath: raw)), channels: 6)
        print("5.1 on a 6-channel device: \(played.summary)")
        XCTAssertEqual(Double(played.frames), 48_000, accuracy: 48_000 * 0.05)
        return played
    }

    /// With `audioChannels` 6 a 5.1 source is not downmixed: each speaker's signal reaches its own channel, in ALSA's
    /// order (FL FR RL RR FC LFE), not FFmpeg's (FL FR FC LFE SL SR), with its level unchanged.
    func testSixChannelDevicePlaysFivePointOneAsItIsInALSAsOrder() throws {
        let raw = folder.appendingPathComponent("side51.raw").path
        let played = try playSixChannels(device: Fixtures.captureDevice(raw, channels: 6), raw: raw)
        // The sides of 5.1(side) go to ALSA's rear pair, as ALSA's surround51 names them.
        let deviceOrder = [0, 1, 4, 5, 2, 3]
        for (channel, speaker) in deviceOrder.enumerated() {
            let expected = Self.sideAmplitudes[speaker] / 2.squareRoot() * 32767
            XCTAssertEqual(
                played.rms(channel: channel), expected, accuracy: expected * 0.03, "device channel \(channel)")
        }
    }

    /// A device that tells its channel map (snd_pcm_get_chmap: FL FR LFE FC SL SR, as HDMI outputs may) gets each
    /// speaker on the channel the map names, not on ALSA's usual one.
    func testSixChannelDeviceWithAChannelMapGetsEachSpeakerWhereItsMapSays() throws {
        let raw = folder.appendingPathComponent("hdmi.raw").path
        let played = try playSixChannels(device: Fixtures.mappedCaptureDevice(raw), raw: raw)
        for (channel, speaker) in [0, 1, 3, 2, 4, 5].enumerated() {
            let expected = Self.sideAmplitudes[speaker] / 2.squareRoot() * 32767
            XCTAssertEqual(
                played.rms(channel: channel), expected, accuracy: expected * 0.03, "device channel \(channel)")
        }
    }
}

/// Interleaved S16_LE audio as captured from ALSA, measured per channel.
typealias Capture = ChannelLevels
