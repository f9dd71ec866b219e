import CastMedia
import CastProtocol
import Foundation
import XCTest

/// A stream the engine cannot decode or convert is never a "successful" silent play: it is passed over for one of
/// the same kind that plays, or playback ends in a playbackError naming the stream and its codec.
final class UnplayableStreamTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws { folder = try Fixtures.folder() }
    override func tearDown() { if let folder { try? FileManager.default.removeItem(at: folder) } }

    /// Plays `path`, which must end in a playbackError; its message (printed).
    private func playbackError(playing path: String, line: UInt = #line) throws -> String {
        let (finish, _) = try playCapturing(path)
        XCTAssertEqual(finish?.reason, .playbackError, line: line)
        let message = finish?.error ?? ""
        print("error: \(message)")
        return message
    }

    /// Plays `path` with audio to a capture file and video (if any) to framemd5; the finish and the captured audio.
    private func playCapturing(_ path: String) throws
        -> (finish: (reason: FinishReason, error: String?)?, audio: Capture)
    {
        let raw = folder.appendingPathComponent("out.raw").path
        try? FileManager.default.removeItem(atPath: raw)
        let md5 = folder.appendingPathComponent("out.framemd5").path
        let (log, _) = try play(
            try FileSource(path: path), audio: .alsa(device: Fixtures.captureDevice(raw)), video: .framemd5(path: md5))
        let bytes = (try? Data(contentsOf: URL(fileURLWithPath: raw))) ?? Data()
        return (log.finish, Capture(bytes, channels: 2))
    }

    /// Two audio tracks in Matroska, an AC-3 one at 440 Hz and an AAC one at 880 Hz: `unknownFirst` renames the
    /// first one's codec id (A_AC3 → A_XYZ), which FFmpeg then has no decoder for.
    private func twoTracks(unknownFirst: Bool, only: Bool = false) throws -> String {
        let path = folder.appendingPathComponent("tracks.mkv").path
        try Fixtures.run(
            "ffmpeg",
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-f", "lavfi", "-i",
                "sine=frequency=880:duration=1", "-map", "0",
            ] + (only ? [] : ["-map", "1"])
                + ["-c:a:0", "ac3", "-c:a:1", "aac", path])
        guard unknownFirst else { return path }
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let range = try XCTUnwrap(bytes.range(of: Data("A_AC3".utf8)))
        bytes.replaceSubrange(range, with: Data("A_XYZ".utf8))
        let renamed = folder.appendingPathComponent("unknown.mkv").path
        try bytes.write(to: URL(fileURLWithPath: renamed))
        return renamed
    }

    /// ffmpeg itself takes the first track and stops ("Decoder (codec none) not found"); the engine plays the one
    /// it can decode.
    func testAnAudioTrackWithoutADecoderIsPassedOverForOneWithIt() throws {
        let (finish, audio) = try playCapturing(try twoTracks(unknownFirst: true))
        XCTAssertEqual(finish?.reason, .playbackEnded, "\(String(describing: finish))")
        XCTAssertEqual(Double(audio.frames), 48_000, accuracy: 48_000 * 0.05)
        XCTAssertEqual(audio.frequency(channel: 0), 880, accuracy: 880 * 0.02, "the AAC track plays")
    }

    func testTheOnlyAudioTrackWithoutADecoderIsAnErrorNamingIt() throws {
        let message = try playbackError(playing: try twoTracks(unknownFirst: true, only: true))
        XCTAssertTrue(message.hasPrefix("audio stream #0 (unknown codec"), message)
        XCTAssertTrue(message.hasSuffix("Decoder not found"), message)
    }

    /// Sonic's decoder is experimental: FFmpeg will not open it unless asked to (`-strict -2`).
    func testADecoderThatWillNotOpenIsAnErrorNamingItsStreamAndCodec() throws {
        let path = folder.appendingPathComponent("sonic.nut").path
        try Fixtures.run(
            "ffmpeg",
            ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=duration=1", "-c:a", "sonic", "-strict", "-2", path])
        let message = try playbackError(playing: path)
        XCTAssertTrue(message.hasPrefix("audio stream #0 (sonic"), message)
        XCTAssertTrue(message.contains("avcodec_open2"), message)
    }

    /// An audio stream whose every packet fails to decode is a playbackError naming the stream and codec, not a
    /// "successful" play of the video in silence.
    func testAnAudioStreamThatNeverDecodesIsAnErrorNamingItsStreamAndCodec() throws {
        let good = folder.appendingPathComponent("good.mkv").path
        try Fixtures.run(
            "ffmpeg",
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=2", "-f", "lavfi",
                "-i",
                "sine=frequency=440:duration=2", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "ac3", good,
            ])
        // The noise filter changes every byte of every audio packet: no AC-3 frame survives.
        let bad = folder.appendingPathComponent("bad.mkv").path
        try Fixtures.run("ffmpeg", ["-v", "error", "-y", "-i", good, "-c", "copy", "-bsf:a", "noise=amount=1", bad])
        let message = try playbackError(playing: bad)
        XCTAssertTrue(message.hasPrefix("audio stream #1 (ac3"), message)
        XCTAssertTrue(message.contains("failed to decode"), message)
    }
}

extension Capture {
    /// The frequency of one channel's tone, from its zero crossings (48 kHz).
    func frequency(channel: Int) -> Double {
        var crossings = 0
        var previous: Int16 = 0
        for i in stride(from: channel, to: frames * channels, by: channels) {
            if (samples[i] < 0) != (previous < 0) { crossings += 1 }
            previous = samples[i]
        }
        return Double(crossings) / 2 / (Double(frames) / 48_000)
    }
}
