import Foundation
import XCTest

/// Subtitles, end to end: films with subtitle tracks made by the ffmpeg CLI, sent with `cast send` to castd in the lab,
/// the presented frames (framemd5, subtitles burnt in) compared with `ffmpeg -vf subtitles=…` and with the plain video.
final class SubtitleTests: LabTestCase {
    override class var labPrefix: String { "e2u" }
    private var receiver: Daemon!

    override func setUpWithError() throws {
        try super.setUpWithError()
        (receiver, _) = try lab.startRecordingReceiver(work: work)
    }

    private enum Fixtures {
        /// Two lines with a gap between them (frames 0–12, 38–49 and 75–99 show none at 25 fps).
        static let srt = """
            1
            00:00:00,500 --> 00:00:01,500
            Hello, subtitles!

            2
            00:00:02,000 --> 00:00:03,000
            <i>Second</i> line

            """
        /// Styled ASS: colours, a positioned line over a bottom one, a translucent shadow.
        static let ass = """
            [Script Info]
            ScriptType: v4.00+
            PlayResX: 320
            PlayResY: 240

            [V4+ Styles]
            Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, \
            Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, \
            MarginL, MarginR, MarginV, Encoding
            Style: Default,DejaVu Sans,20,&H0000FFFF,&H000000FF,&H00000000,&H80000000,1,0,0,0,100,100,0,0,1,2,1,2,\
            10,10,10,1

            [Events]
            Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
            Dialogue: 0,0:00:00.50,0:00:02.00,Default,,0,0,0,,{\\pos(160,60)}Yellow {\\c&H00FF00&}green
            Dialogue: 0,0:00:01.00,0:00:03.00,Default,,0,0,0,,Bottom line

            """
    }

    /// A 4 s 320×240 film (no audio) with one subtitle track made from `subtitles` with `codec`.
    private func film(_ name: String, subtitles: String, codec: String, disposition: String = "default") throws
        -> String
    {
        let source = "\(work!)/\(name).\(subtitles == Fixtures.ass ? "ass" : "srt")"
        try subtitles.write(toFile: source, atomically: true, encoding: .utf8)
        let path = "\(work!)/\(name)"
        let made = try runCommand([
            "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=4",
            "-i", source, "-map", "0", "-map", "1", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-g", "25",
            "-c:s", codec, "-disposition:s:0", disposition, path,
        ])
        XCTAssertEqual(made.status, 0, made.stderr)
        return path
    }

    /// What castd presented for `film`: its framemd5 lines without `#software`.
    private func presented(_ film: String, _ arguments: [String] = []) throws -> [String] {
        let result = try lab.run(
            on: .phone, [Paths.cast, "send", film, "--to", "Living Room"] + arguments,
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        XCTAssertEqual(result.status, 0, result.stderr)
        return Media.comparable(try String(contentsOfFile: "\(work!)/frames.md5", encoding: .utf8))
    }

    /// ffmpeg's framemd5 of `film` with its subtitles burnt in by the `subtitles` filter (libass).
    private func burntInByFFmpeg(_ film: String) throws -> [String] {
        let result = try runCommand(
            ["ffmpeg", "-v", "error", "-i", film, "-vf", "subtitles=\(film)", "-map", "0:v", "-f", "framemd5", "-"])
        XCTAssertEqual(result.status, 0, result.stderr)
        return Media.comparable(result.stdout)
    }

    /// SRT, ASS and WebVTT in Matroska and mov_text in MP4: every presented frame is bit for bit ffmpeg's burnt-in
    /// frame (the same libass layout, the same blending arithmetic), the frames with a line differ from the plain
    /// video, and the frames without one are the plain video's, bit for bit.
    func testEmbeddedTextSubtitlesMatchFFmpegsBurntInFrames() throws {
        for (name, subtitles, codec, shown) in [
            ("srt.mkv", Fixtures.srt, "srt", 50), ("ass.mkv", Fixtures.ass, "ass", 62),
            ("webvtt.mkv", Fixtures.srt, "webvtt", 50), ("mov_text.mp4", Fixtures.srt, "mov_text", 50),
        ] {
            let film = try film(name, subtitles: subtitles, codec: codec)
            let plain = try Media.ffmpegFrameMD5(film)
            let reference = try burntInByFFmpeg(film)
            let frames = try presented(film)
            XCTAssertEqual(frames.count, plain.count, name)
            XCTAssertEqual(frames, reference, name)
            let withText = Set(frames.indices.filter { $0 < plain.count && frames[$0] != plain[$0] })
            // The filter's own frames with text: castd shows text on exactly those.
            let referenceWithText = Set(reference.indices.filter { $0 < plain.count && reference[$0] != plain[$0] })
            XCTAssertEqual(withText.count, shown, "\(name): frames with text")
            XCTAssertEqual(withText, referenceWithText, name)
            let without = frames.indices.filter { !withText.contains($0) }
            XCTAssertGreaterThan(without.count, 30, name)
            for index in without { XCTAssertEqual(frames[index], plain[index], "\(name): line \(index)") }
            print("\(name): \(frames.filter { !$0.hasPrefix("#") }.count) frames, \(withText.count) with text, all equal to ffmpeg's")
        }
    }

    /// A track marked neither default nor forced is not shown (as mpv): the frames are the plain video's.
    func testUnmarkedTrackIsNotShown() throws {
        let film = try film("unmarked.mkv", subtitles: Fixtures.srt, codec: "srt", disposition: "0")
        XCTAssertEqual(try presented(film), try Media.ffmpegFrameMD5(film))
    }
}
