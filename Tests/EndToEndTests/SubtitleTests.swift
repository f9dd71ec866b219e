import Foundation
import XCTest

/// Subtitles, end to end: films with subtitle tracks made by the ffmpeg CLI, sent with `cast send` to castd in the lab,
/// the presented frames (framemd5, subtitles burnt in) compared with `ffmpeg -vf subtitles=…` and with the plain video.
final class SubtitleTests: LabTestCase {
    override class var labPrefix: String { "e2u" }
    private var receiver: Daemon!

    override func setUpWithError() throws {
        try super.setUpWithError()
        // As `startRecordingReceiver`, with every presented frame's bytes kept too (CAST_FRAMES_RAW), for the bitmap
        // subtitles that are compared by pixel difference.
        receiver = try lab.start(
            on: .box,
            [
                Paths.castd, "--name", "Living Room", "--auth", "none", "--port", "0", "--state-dir", "\(work!)/state",
                "--video-out", "framemd5:\(work!)/frames.md5", "--audio-device", "none",
            ],
            environment: ["CAST_FRAMES_RAW": "\(work!)/frames.raw"])
        _ = try receiver.listeningPort()
        XCTAssertNotNil(receiver.waitForLine(containing: "advertised as"), "\(receiver.output)")
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

    /// A PGS (Blu-ray) subtitle stream as a `.sup` file: a 240×40 picture with a 3-pixel border and stripes in three
    /// opaque colours and a translucent one, shown at the bottom from 0.5 s to 1.5 s and at the top from 2 s to 3 s
    /// (the sup demuxer counts from the first picture, so in the film: 0–1 s and 1.5–2.5 s).
    private static func pgs() -> Data {
        func be(_ value: Int, _ bytes: Int) -> [UInt8] {
            (0..<bytes).reversed().map { UInt8(value >> (8 * $0) & 0xFF) }
        }
        func segment(_ pts: Int, _ type: UInt8, _ data: [UInt8]) -> [UInt8] {
            Array("PG".utf8) + be(pts, 4) + be(0, 4) + [type] + be(data.count, 2) + data
        }
        let (w, h) = (240, 40)
        // Run-length coding of each row (the HDMV scheme: a lone colour byte, or 0 then a flagged length).
        var rle: [UInt8] = []
        for row in 0..<h {
            var runs: [(colour: UInt8, count: Int)] = []
            for column in 0..<w {
                let border = row < 3 || row >= h - 3 || column < 3 || column >= w - 3
                let colour: UInt8 = border ? 3 : (column / 20) % 3 == 0 ? 1 : (column / 20) % 3 == 1 ? 2 : 4
                if runs.last?.colour == colour { runs[runs.count - 1].count += 1 } else { runs.append((colour, 1)) }
            }
            for (colour, count) in runs {
                if colour == 0 {
                    rle += count < 64 ? [0, UInt8(count)] : [0, 0x40 | UInt8(count >> 8), UInt8(count & 0xFF)]
                } else if count < 3 {
                    rle += [UInt8](repeating: colour, count: count)
                } else {
                    rle +=
                        count < 64
                        ? [0, 0x80 | UInt8(count), colour]
                        : [0, 0xC0 | UInt8(count >> 8), UInt8(count & 0xFF), colour]
                }
            }
            rle += [0, 0]
        }
        func show(_ pts: Int, y: Int, number: Int) -> [UInt8] {
            let composition =
                be(320, 2) + be(240, 2) + [0x10] + be(number, 2) + [0x80, 0, 0, 1] + be(0, 2) + [0, 0]
                + be(40, 2) + be(y, 2)
            let window = [1, 0] + be(40, 2) + be(y, 2) + be(w, 2) + be(h, 2)
            // Palette entries: index, Y, Cr, Cb, alpha.
            let palette: [UInt8] = [
                0, 0, 1, 235, 128, 128, 255, 2, 81, 240, 90, 255, 3, 16, 128, 128, 255,
                4, 145, 54, 34, 128,
            ]
            let object = be(0, 2) + [0, 0xC0] + be(rle.count + 4, 3) + be(w, 2) + be(h, 2) + rle
            return segment(pts, 0x16, composition) + segment(pts, 0x17, window) + segment(pts, 0x14, palette)
                + segment(pts, 0x15, object) + segment(pts, 0x80, [])
        }
        func clear(_ pts: Int, number: Int) -> [UInt8] {
            let composition = be(320, 2) + be(240, 2) + [0x10] + be(number, 2) + [0, 0, 0, 0]
            return segment(pts, 0x16, composition)
                + segment(
                    pts, 0x17,
                    [1, 0] + be(40, 2) + be(180, 2) + be(w, 2)
                        + be(h, 2)) + segment(pts, 0x80, [])
        }
        return Data(
            show(45_000, y: 180, number: 0) + clear(135_000, number: 1) + show(180_000, y: 20, number: 2)
                + clear(270_000, number: 3))
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
    /// `track`: the film's subtitle track of that number (the filter's `si`), else the first.
    private func burntInByFFmpeg(_ film: String, track: Int = 0) throws -> [String] {
        let result = try runCommand([
            "ffmpeg", "-v", "error", "-i", film, "-vf", "subtitles=\(film):si=\(track)", "-map", "0:v", "-f",
            "framemd5",
            "-",
        ])
        XCTAssertEqual(result.status, 0, result.stderr)
        return Media.comparable(result.stdout)
    }

    /// A 320×240 film of `seconds` with two SRT tracks made from the files `english` (default) and `french`.
    private func twoSubtitleFilm(_ name: String, english: String, french: String, seconds: Int) throws -> String {
        let film = "\(work!)/\(name)"
        let made = try runCommand([
            "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=\(seconds)",
            "-i", english, "-i", french, "-map", "0", "-map", "1", "-map", "2", "-c:v", "libx264", "-pix_fmt",
            "yuv420p", "-g", "25", "-c:s", "srt", "-metadata:s:s:0", "language=eng", "-metadata:s:s:1",
            "language=fra", "-disposition:s:0", "default", "-disposition:s:1", "0", film,
        ])
        XCTAssertEqual(made.status, 0, made.stderr)
        return film
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
            print(
                "\(name): \(frames.filter { !$0.hasPrefix("#") }.count) frames, \(withText.count) with text, "
                    + "all equal to ffmpeg's"
            )
        }
    }

    /// Bitmap subtitles: PGS in Matroska (a `.sup` made here), VobSub (dvdsub) and DVB (dvbsub), which ffmpeg makes from
    /// the PGS pictures. The pictures are on the frames their times say and on no other (those are the plain video's, bit for
    /// bit); where shown, each frame is within a small mean difference of ffmpeg's `[0:v][0:s]overlay` (FFmpeg's
    /// overlay
    /// filter converts the picture with swscale and blends differently, so not bit-exact: measured 0.06–0.08 per byte;
    /// a picture misplaced or in wrong colours differs by about 10).
    func testBitmapSubtitlesAreDrawnOnTheirFrames() throws {
        let sup = "\(work!)/pictures.sup"
        try Self.pgs().write(to: URL(fileURLWithPath: sup))
        let pgs = "\(work!)/pgs.mkv"
        let vob = "\(work!)/vobsub.mkv"
        let dvb = "\(work!)/dvb.mkv"
        for command in [
            [
                "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=4", "-i",
                sup,
                "-map", "0", "-map", "1", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-g", "25", "-c:s", "copy",
                "-disposition:s:0", "default", pgs,
            ],
            // ffmpeg's dvdsub encoder keeps the pictures but not their ends: each lasts until the next.
            [
                "ffmpeg", "-v", "error", "-y", "-i", pgs, "-map", "0", "-c:v", "copy", "-c:s", "dvdsub",
                "-disposition:s:0", "default", vob,
            ],
            // The dvbsub encoder needs each picture's end (-fix_sub_duration: until the next), or every time after
            // the first comes out as 2^32 ms.
            [
                "ffmpeg", "-v", "error", "-y", "-fix_sub_duration", "-i", pgs, "-map", "0", "-c:v", "copy", "-c:s",
                "dvbsub", "-disposition:s:0", "default", dvb,
            ],
        ] {
            let made = try runCommand(command)
            XCTAssertEqual(made.status, 0, made.stderr)
        }
        let frameBytes = 320 * 240 * 3 / 2
        for (film, shown) in [
            (pgs, Set(0..<25).union(38..<63)), (vob, Set(0..<100)), (dvb, Set(0..<25).union(38..<63)),
        ] {
            let plain = try Media.ffmpegFrameMD5(film).filter { !$0.hasPrefix("#") }
            let frames = try presented(film).filter { !$0.hasPrefix("#") }
            XCTAssertEqual(frames.count, 100, film)
            XCTAssertEqual(plain.count, 100, film)
            let withPicture = Set(frames.indices.filter { $0 < plain.count && frames[$0] != plain[$0] })
            XCTAssertEqual(withPicture, shown, film)
            let raw = try Data(contentsOf: URL(fileURLWithPath: "\(work!)/frames.raw"))
            XCTAssertEqual(raw.count, 100 * frameBytes, film)
            let ffmpegFrames = try rawFrames(["-i", film, "-filter_complex", "[0:v][0:s]overlay", "-frames:v", "100"])
            let plainFrames = try rawFrames(["-i", film, "-map", "0:v"])
            func meanDifference(_ a: Data, _ b: Data, frame: Int) -> Double {
                let range = frame * frameBytes..<(frame + 1) * frameBytes
                var total = 0
                for (x, y) in zip(a[range], b[range]) { total += abs(Int(x) - Int(y)) }
                return Double(total) / Double(frameBytes)
            }
            var worst = 0.0
            for frame in shown.sorted() {
                // ffmpeg's overlay keeps a picture a frame or two past its end (sub2video's own lag): those frames
                // are compared with the plain video only.
                let ffmpegShows = meanDifference(ffmpegFrames, plainFrames, frame: frame) > 1
                XCTAssertGreaterThan(meanDifference(raw, plainFrames, frame: frame), 2, "\(film) frame \(frame)")
                if ffmpegShows {
                    let difference = meanDifference(raw, ffmpegFrames, frame: frame)
                    worst = max(worst, difference)
                    XCTAssertLessThan(difference, 0.5, "\(film) frame \(frame)")
                }
            }
            print(
                "\((film as NSString).lastPathComponent): \(shown.count) frames with the picture, worst mean "
                    + "difference to ffmpeg's overlay \(String(format: "%.3f", worst))"
            )
        }
    }

    /// The frames ffmpeg makes with `arguments`, packed as yuv420p.
    private func rawFrames(_ arguments: [String]) throws -> Data {
        let path = "\(work!)/ffmpeg-frames.yuv"
        let made = try runCommand(
            ["ffmpeg", "-v", "error", "-y"] + arguments + ["-f", "rawvideo", "-pix_fmt", "yuv420p", path], timeout: 120)
        XCTAssertEqual(made.status, 0, made.stderr)
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    /// Two subtitle tracks, English (default) and French: `--sub-lang fra` (or `fr`) shows the French one, `off` none,
    /// a language no track has the default one; a malformed choice is a usage error (exit 2) before anything is sent.
    func testSubLangChoosesTheTrack() throws {
        let english = "\(work!)/english.srt"
        let french = "\(work!)/french.srt"
        try Fixtures.srt.write(toFile: english, atomically: true, encoding: .utf8)
        try Fixtures.srt.replacingOccurrences(of: "Hello, subtitles!", with: "Bonjour, les sous-titres !")
            .replacingOccurrences(of: "<i>Second</i> line", with: "Deuxième <i>ligne</i>")
            .write(toFile: french, atomically: true, encoding: .utf8)
        let film = try twoSubtitleFilm("two-subtitles.mkv", english: english, french: french, seconds: 4)
        let (englishFrames, frenchFrames, plain) = (
            try burntInByFFmpeg(film, track: 0), try burntInByFFmpeg(film, track: 1), try Media.ffmpegFrameMD5(film)
        )
        XCTAssertNotEqual(englishFrames, frenchFrames)
        for (arguments, expected) in [
            ([], englishFrames), (["--sub-lang", "fra"], frenchFrames), (["--sub-lang", "fr"], frenchFrames),
            (["--sub-lang", "off"], plain), (["--sub-lang", "deu"], englishFrames),
        ] {
            XCTAssertEqual(try presented(film, arguments), expected, "\(arguments)")
        }
        for bad in ["french", "f", "fr1"] {
            let refused = try lab.run(
                on: .phone, [Paths.cast, "send", film, "--to", "Living Room", "--sub-lang", bad],
                environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
            XCTAssertEqual(refused.status, 2, "\(bad): \(refused.stderr)")
        }
    }

    /// `cast send film --subtitles file.srt`: castd reads the file over the media connection and shows it instead of
    /// the film's own track, bit for bit as `ffmpeg -vf subtitles=file.srt` burns it in; a file over 8 MB, or a
    /// subtitle file with a URL, is a usage error (exit 2) before anything is sent.
    func testSidecarFileIsShownInsteadOfTheFilmsTrack() throws {
        let sidecar = "\(work!)/sidecar.srt"
        try Fixtures.srt.replacingOccurrences(of: "Hello, subtitles!", with: "From the sidecar file")
            .write(toFile: sidecar, atomically: true, encoding: .utf8)
        let film = try film("with-track.mkv", subtitles: Fixtures.srt, codec: "srt")
        let result = try runCommand([
            "ffmpeg", "-v", "error", "-i", film, "-vf", "subtitles=\(sidecar)", "-map", "0:v", "-f", "framemd5", "-",
        ])
        XCTAssertEqual(result.status, 0, result.stderr)
        let reference = Media.comparable(result.stdout)
        XCTAssertNotEqual(reference, try burntInByFFmpeg(film))
        XCTAssertEqual(try presented(film, ["--subtitles", sidecar]), reference)
        // Without it, the film's own track again (the sidecar does not linger on the receiver).
        XCTAssertEqual(try presented(film), try burntInByFFmpeg(film))

        let huge = "\(work!)/huge.srt"
        XCTAssertTrue(FileManager.default.createFile(atPath: huge, contents: Data(count: (8 << 20) + 1)))
        for (arguments, what) in [
            ([film, "--subtitles", huge], "over 8 MB"), ([film, "--subtitles", "\(work!)/missing.srt"], "missing"),
            (["http://192.0.2.1/film.mkv", "--subtitles", sidecar], "with a URL"),
        ] {
            let refused = try lab.run(
                on: .phone, [Paths.cast, "send"] + arguments + ["--to", "Living Room"],
                environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
            XCTAssertEqual(refused.status, 2, "\(what): \(refused.stderr)")
        }
    }

    /// `cast subtitles NAME fra` while a film plays: the frames are the English track's (ffmpeg's burnt-in frame for
    /// each timestamp) until the switch, the French track's from then on, never one then the other again; `off` turns
    /// them off (the plain video's frames from then on). A malformed language is exit 2, nothing playing exit 1.
    func testSubtitlesSwitchWhilePlaying() throws {
        // Lines on every frame, so that each frame tells which track is shown.
        func cues(_ words: String) -> String {
            (0..<4).map { i in "\(i + 1)\n00:00:0\(2 * i),000 --> 00:00:0\(2 * i + 2),000\n\(words) \(i + 1)\n" }
                .joined(separator: "\n")
        }
        let english = "\(work!)/english.srt"
        let french = "\(work!)/french.srt"
        try cues("English line").write(toFile: english, atomically: true, encoding: .utf8)
        try cues("Ligne française").write(toFile: french, atomically: true, encoding: .utf8)
        let film = try twoSubtitleFilm("switch.mkv", english: english, french: french, seconds: 8)
        /// pts → MD5 of a framemd5 listing.
        func byTimestamp(_ lines: [String]) -> [String: String] {
            var map: [String: String] = [:]
            for line in lines where !line.hasPrefix("#") {
                let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                map[fields[2]] = fields[5]
            }
            return map
        }
        let tracks = [
            "eng": byTimestamp(try burntInByFFmpeg(film, track: 0)),
            "fra": byTimestamp(try burntInByFFmpeg(film, track: 1)),
            "off": byTimestamp(try Media.ffmpegFrameMD5(film)),
        ]
        let env = ["XDG_CONFIG_HOME": "\(work!)/sender"]
        /// The subtitle tracks `cast status --json` lists as shown, as "#INDEX LANGUAGE CODEC" (both tracks are
        /// listed).
        func shownTracks(line: UInt = #line) throws -> [String] {
            let status = try lab.run(on: .phone, [Paths.cast, "status", "Living Room", "--json"], environment: env)
            XCTAssertEqual(status.status, 0, status.stderr)
            let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
            let tracks = object?["tracks"] as? [[String: Any]] ?? []
            XCTAssertEqual(tracks.count, 2, "\(status.stdout) \(line)")
            return tracks.filter { $0["selected"] as? Bool == true }.map {
                "#\($0["index"] ?? "?") \($0["language"] ?? "?") \($0["codec"] ?? "?")"
            }
        }
        for choice in ["fra", "off"] {
            let sender = try lab.start(
                on: .phone, [Paths.cast, "send", film, "--to", "Living Room", "--json"], environment: env)
            XCTAssertNotNil(
                sender.waitForLine(containing: #""position":2."#, timeout: 20), "\(sender.output.suffix(5))")
            XCTAssertEqual(try shownTracks(), ["#1 eng subrip"], "the default track, listed in cast status")
            let switched = try lab.run(on: .phone, [Paths.cast, "subtitles", "Living Room", choice], environment: env)
            XCTAssertEqual(switched.status, 0, switched.stderr)
            XCTAssertEqual(switched.stdout, "subtitles: \(choice)\n")
            // The status lists the tracks with the one shown now (none after off).
            var after = try shownTracks()
            for _ in 0..<50 where after == ["#1 eng subrip"] {
                Thread.sleep(forTimeInterval: 0.05)
                after = try shownTracks()
            }
            XCTAssertEqual(after, choice == "off" ? [] : ["#2 fra subrip"])
            XCTAssertEqual(sender.waitForExit(timeout: 30), 0, "\(sender.output.suffix(5))")
            // Which track each presented frame shows, in the order presented.
            let shown = Media.comparable(try String(contentsOfFile: "\(work!)/frames.md5", encoding: .utf8))
                .filter { !$0.hasPrefix("#") }.map { line -> String in
                    let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                    return tracks.first { $0.value[fields[2]] == fields[5] }?.key ?? "neither (pts \(fields[2]))"
                }
            let first = try XCTUnwrap(shown.firstIndex(of: choice), "\(choice): \(shown)")
            XCTAssertGreaterThan(first, 25, "\(choice): the switch came after 2 s")
            XCTAssertEqual(Set(shown[..<first]), ["eng"], "\(choice): \(shown)")
            XCTAssertEqual(Set(shown[first...]), [choice], "\(choice): \(shown)")
            print("cast subtitles \(choice): \(first) frames in English, then \(shown.count - first) \(choice)")
        }
        XCTAssertEqual(
            try lab.run(on: .phone, [Paths.cast, "subtitles", "Living Room", "french"], environment: env).status, 2)
        XCTAssertEqual(
            try lab.run(on: .phone, [Paths.cast, "subtitles", "Living Room", "fra"], environment: env).status, 1)
    }

    /// A track marked neither default nor forced is not shown (as mpv): the frames are the plain video's.
    func testUnmarkedTrackIsNotShown() throws {
        let film = try film("unmarked.mkv", subtitles: Fixtures.srt, codec: "srt", disposition: "0")
        XCTAssertEqual(try presented(film), try Media.ffmpegFrameMD5(film))
    }
}
