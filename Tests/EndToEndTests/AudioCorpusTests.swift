import CastTestSupport
import Foundation
import XCTest

/// The audio people keep on a NAS, made with the ffmpeg CLI and sent through castd in the lab: what reached ALSA
/// (the capture, 48 kHz stereo) against ffmpeg's own decode and downmix of the same file (`-ac 2 -ar 48000`), in
/// length and in level per channel, not only "not silent". One castd plays the whole corpus, file after file.
final class AudioCorpusTests: LabTestCase {
    override class var labPrefix: String { "e2m" }

    /// One file of the corpus: how ffmpeg makes it, and what it covers.
    private struct Clip {
        var name: String
        /// An `aevalsrc` source: one expression per channel, the layout and the rate.
        var source: String
        var codec: [String]

        init(_ name: String, _ source: String, _ codec: [String]) {
            self.name = name
            self.source = source
            self.codec = codec
        }
    }

    /// Every channel a tone of its own (300, 370, 440 … Hz at 0.15), so that a channel lost or misplaced changes the
    /// level of the downmix.
    private static func tones(_ layout: String, channels: Int, rate: Int, seconds: Double = 2) -> String {
        let expressions = (0..<channels).map { "0.15*sin(2*PI*\(300 + 70 * $0)*t)" }
        return "aevalsrc=\(expressions.joined(separator: "|")):c=\(layout):s=\(rate):d=\(seconds)"
    }

    /// Only the front centre sounds (where a film's dialogue is): FFmpeg's order puts it third in 5.1 and 7.1.
    private static func centreOnly(_ layout: String, channels: Int) -> String {
        let expressions = (0..<channels).map { $0 == 2 ? "0.4*sin(2*PI*440*t)" : "0" }
        return "aevalsrc=\(expressions.joined(separator: "|")):c=\(layout):s=48000:d=2"
    }

    private static let corpus: [Clip] = [
        // The six surround files of issue 14, their signal on the centre channel.
        Clip("aac-5.1.mp4", centreOnly("5.1", channels: 6), ["-c:a", "aac"]),
        Clip("ac3-5.1.ts", centreOnly("5.1", channels: 6), ["-c:a", "ac3"]),
        Clip("dts-5.1.mkv", centreOnly("5.1", channels: 6), ["-c:a", "dca", "-strict", "-2"]),
        Clip("flac-7.1.mkv", centreOnly("7.1", channels: 8), ["-c:a", "flac"]),
        Clip("eac3-5.1.mp4", centreOnly("5.1", channels: 6), ["-c:a", "eac3"]),
        Clip("opus-5.1.mkv", centreOnly("5.1", channels: 6), ["-c:a", "libopus"]),
        // Layouts from mono to 7.1, rates from 8 to 192 kHz, the codecs and containers people have.
        Clip("pcm-mono-8k.wav", tones("mono", channels: 1, rate: 8000), ["-c:a", "pcm_s16le"]),
        Clip("aac-stereo-8k.m4a", tones("stereo", channels: 2, rate: 8000), ["-c:a", "aac"]),
        Clip("mp3-mono-22k.mkv", tones("mono", channels: 1, rate: 22050), ["-c:a", "libmp3lame"]),
        Clip("mp3-stereo-44k.mp3", tones("stereo", channels: 2, rate: 44100), ["-c:a", "libmp3lame"]),
        Clip("vorbis-quad-44k.ogg", tones("quad", channels: 4, rate: 44100), ["-c:a", "libvorbis"]),
        Clip("aac-7.1-44k.mp4", tones("7.1", channels: 8, rate: 44100), ["-c:a", "aac"]),
        Clip("ac3-5.0-44k.mkv", tones("5.0", channels: 5, rate: 44100), ["-c:a", "ac3"]),
        Clip("eac3-2.1-48k.ts", tones("2.1", channels: 3, rate: 48000), ["-c:a", "eac3"]),
        Clip("opus-6.1-48k.ogg", tones("6.1", channels: 7, rate: 48000), ["-c:a", "libopus"]),
        Clip("alac-5.1-48k.m4a", tones("5.1", channels: 6, rate: 48000), ["-c:a", "alac"]),
        // PCM in Matroska has a channel count and no layout: FFmpeg's order is unspecified.
        Clip("pcm-6ch-48k.mkv", tones("5.1", channels: 6, rate: 48000), ["-c:a", "pcm_s16le"]),
        Clip("flac-5.0-96k.mkv", tones("5.0", channels: 5, rate: 96000), ["-c:a", "flac"]),
        Clip("pcm-2.1-192k.wav", tones("2.1", channels: 3, rate: 192000), ["-c:a", "pcm_s24le"]),
    ]

    func testEveryCorpusFileReachesALSAAsFFmpegDecodesAndDownmixesIt() throws {
        let (receiver, _) = try lab.startRecordingReceiver(work: work)
        var clips = Self.corpus
        // HE-AAC needs libfdk_aac, which Debian's ffmpeg does not have (its own encoder makes AAC-LC only).
        let encoders = try runCommand(["ffmpeg", "-hide_banner", "-encoders"]).stdout
        if encoders.contains("libfdk_aac") {
            let codec = ["-c:a", "libfdk_aac", "-profile:a", "aac_he"]
            clips.append(Clip("he-aac-stereo-44k.m4a", Self.tones("stereo", channels: 2, rate: 44100), codec))
        } else {
            print("HE-AAC: skipped, this ffmpeg has no libfdk_aac encoder")
        }
        var table: [String] = []
        for clip in clips {
            let path = "\(work!)/\(clip.name)"
            let made = try runCommand(
                ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", clip.source] + clip.codec + [path])
            XCTAssertEqual(made.status, 0, "\(clip.name): \(made.stderr)")
            guard made.status == 0 else { continue }
            try? FileManager.default.removeItem(atPath: "\(work!)/audio.raw")
            let sent = try lab.run(
                on: .phone, [Paths.cast, "send", path, "--to", "Living Room", "--json"],
                environment: ["XDG_CONFIG_HOME": "\(work!)/sender"], timeout: 60)
            XCTAssertEqual(sent.status, 0, "\(clip.name): \(sent.stderr)")
            XCTAssertTrue(
                sent.stdout.contains(#""reason":"playbackEnded""#), "\(clip.name): \(sent.stdout.suffix(300))")
            let played = Levels(try Data(contentsOf: URL(fileURLWithPath: "\(work!)/audio.raw")), channels: 2)
            let reference = try ffmpegDownmix(path)
            let lengthDifference = Double(played.frames - reference.frames) / 48000
            let decibels = (0..<2).map { played.decibels(channel: $0, relativeTo: reference) }
            table.append(
                clip.name.padding(toLength: 22, withPad: " ", startingAt: 0)
                    + String(
                        format: "length %+.3f s  level L %+.2f dB R %+.2f dB", lengthDifference, decibels[0],
                        decibels[1])
                    + "  (RMS \(played.rmsList) vs \(reference.rmsList))")
            XCTAssertGreaterThan(reference.rms(channel: 0), 300, "\(clip.name): ffmpeg's downmix is not silent")
            XCTAssertEqual(lengthDifference, 0, accuracy: 0.02, "\(clip.name): \(played.frames) vs \(reference.frames)")
            for channel in 0..<2 {
                XCTAssertEqual(decibels[channel], 0, accuracy: 1, "\(clip.name) channel \(channel)")
            }
        }
        receiver.stop()
        print("audio corpus, castd against ffmpeg -ac 2 -ar 48000:\n" + table.joined(separator: "\n"))
    }

    /// `--audio-channels 6`: castd (through its decoder worker) opens 6 channels and plays 5.1 as it is, each
    /// speaker on its own channel in ALSA's order (FL FR RL RR FC LFE).
    func testFivePointOnePlaysAsItIsWithSixAudioChannels() throws {
        let (receiver, _) = try lab.startRecordingReceiver(
            work: work, extra: ["--audio-channels", "6"], captureChannels: 6)
        let amplitudes = [0.05, 0.1, 0.2, 0.15, 0.25, 0.3]  // FL FR FC LFE BL BR
        let expressions = amplitudes.enumerated().map { "\($1)*sin(2*PI*\(300 + 100 * $0)*t)" }
        let path = "\(work!)/back-5.1.mkv"
        let made = try runCommand(
            [
                "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
                "aevalsrc=\(expressions.joined(separator: "|")):c=5.1:s=48000:d=2", "-c:a", "flac", path,
            ])
        XCTAssertEqual(made.status, 0, made.stderr)
        let sent = try lab.run(
            on: .phone, [Paths.cast, "send", path, "--to", "Living Room"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"], timeout: 60)
        XCTAssertEqual(sent.status, 0, sent.stderr)
        receiver.stop()
        let played = Levels(try Data(contentsOf: URL(fileURLWithPath: "\(work!)/audio.raw")), channels: 6)
        print("5.1 with --audio-channels 6: \(played.frames) frames, RMS \(played.rmsList)")
        XCTAssertEqual(Double(played.frames), 96_000, accuracy: 48_000 * 0.05)
        for (channel, speaker) in [0, 1, 4, 5, 2, 3].enumerated() {
            let expected = amplitudes[speaker] / 2.squareRoot() * 32767
            XCTAssertEqual(
                played.rms(channel: channel), expected, accuracy: expected * 0.03, "device channel \(channel)")
        }
    }

    /// A movie whose audio never decodes is a playbackError naming the stream and codec; castd goes on.
    func testAnUndecodableAudioStreamIsAPlaybackErrorNamingIt() throws {
        let (receiver, _) = try lab.startRecordingReceiver(work: work)
        let good = try Media.clip("corpus-ac3.mkv", seconds: 2, extra: ["-c:a", "ac3"])
        // The noise filter changes every byte of every audio packet.
        let bad = "\(work!)/bad-ac3.mkv"
        let made = try runCommand(
            ["ffmpeg", "-v", "error", "-y", "-i", good, "-c", "copy", "-bsf:a", "noise=amount=1", bad])
        XCTAssertEqual(made.status, 0, made.stderr)
        let sent = try lab.run(
            on: .phone, [Paths.cast, "send", bad, "--to", "Living Room", "--json"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"], timeout: 60)
        XCTAssertEqual(sent.status, 1, sent.stderr)
        let finish = sent.stdout.split(separator: "\n").last.map(String.init) ?? ""
        print("undecodable audio: \(finish)")
        XCTAssertTrue(finish.contains(#""reason":"playbackError""#), finish)
        XCTAssertTrue(finish.contains("audio stream #1 (ac3"), finish)
        XCTAssertTrue(finish.contains("failed to decode"), finish)
        XCTAssertTrue(receiver.isRunning)
    }

    /// ffmpeg's own decode and downmix of `path` to the capture's format.
    private func ffmpegDownmix(_ path: String) throws -> Levels {
        let reference = "\(work!)/reference.raw"
        let result = try runCommand(
            ["ffmpeg", "-v", "error", "-y", "-i", path, "-ac", "2", "-ar", "48000", "-f", "s16le", reference])
        XCTAssertEqual(result.status, 0, result.stderr)
        return Levels(try Data(contentsOf: URL(fileURLWithPath: reference)), channels: 2)
    }
}

/// Interleaved S16_LE audio measured per channel.
private typealias Levels = ChannelLevels
