import Foundation
import XCTest

/// The video people keep on a NAS and phones make, made with the ffmpeg CLI and sent through castd in the lab: the
/// frames castd presents (`--video-out framemd5`) against `ffmpeg -i FILE -map 0:v -f framemd5`, line for line, and
/// the natural size it reports. One castd plays a whole list, file after file; clips are short and small.
final class VideoCorpusTests: LabTestCase {
    override class var labPrefix: String { "e2vc" }

    /// One file of the corpus: how ffmpeg makes it, and what it covers.
    private struct Clip {
        var name: String
        /// ffmpeg's arguments between `-y` and the output path: inputs, codecs, options.
        var arguments: [String]
        /// ffmpeg's encoder that must exist for the clip to be made.
        var encoder: String

        init(_ name: String, _ encoder: String, _ arguments: [String]) {
            self.name = name
            self.encoder = encoder
            self.arguments = arguments
        }
    }

    /// A second of testsrc2 at `size` and `rate`, and optionally a tone (AAC unless told).
    private static func source(
        size: String = "160x120", rate: Int = 10, seconds: Double = 1, audio: Bool = false
    )
        -> [String]
    {
        ["-f", "lavfi", "-i", "testsrc2=size=\(size):rate=\(rate):duration=\(seconds)"]
            + (audio
                ? ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=\(seconds)"] : [])
    }

    private static let x264 = ["-c:v", "libx264", "-pix_fmt", "yuv420p"]
    private static let x265 = ["-c:v", "libx265", "-x265-params", "log-level=error"]

    /// A row of the seeds' table: H.264 Baseline 3.0 (or MPEG-4 Part 2 Simple Profile) at `size` and `rate`.
    private static func seeds(
        _ name: String, mpeg4: Bool = false, size: String, rate: Int = 30, audio: [String]
    ) -> Clip {
        let video =
            mpeg4
            ? ["-c:v", "mpeg4", "-profile:v", "0", "-bf", "0"]
            : x264 + ["-profile:v", "baseline", "-level", "3.0"]
        return Clip(
            "seeds-\(name)", mpeg4 ? "mpeg4" : "libx264",
            source(size: size, rate: rate, audio: true) + video + audio)
    }

    /// A second of H.264 whose half second of tone starts half a second in.
    private static func lateAudio(_ name: String, _ codec: [String]) -> Clip {
        Clip(
            name, "libx264",
            source() + ["-itsoffset", "0.5", "-f", "lavfi", "-i", "sine=frequency=440:duration=0.5"]
                + x264 + codec)
    }

    private static let corpus: [Clip] = [
        // Codecs and profiles.
        Clip(
            "h264-baseline.mp4", "libx264",
            source(audio: true) + x264 + ["-profile:v", "baseline", "-c:a", "aac"]),
        Clip(
            "h264-main.mov", "libx264",
            source(audio: true) + x264 + ["-profile:v", "main", "-c:a", "aac"]),
        Clip("h264-high-bframes.mkv", "libx264", source() + x264 + ["-profile:v", "high", "-bf", "3"]),
        Clip(
            "h264-high10.mp4", "libx264",
            source() + ["-c:v", "libx264", "-pix_fmt", "yuv420p10le", "-profile:v", "high10"]),
        Clip(
            "hevc-8bit.mp4", "libx265",
            source(audio: true) + x265 + ["-pix_fmt", "yuv420p", "-tag:v", "hvc1"]),
        Clip("hevc-10bit.mkv", "libx265", source() + x265 + ["-pix_fmt", "yuv420p10le"]),
        // HDR10 and HLG: framemd5 keeps the decoded 10-bit pictures (the window tone-maps them: VideoTransformTests).
        Clip(
            "hevc-10bit-pq.mp4", "libx265",
            source() + x265
                + [
                    "-pix_fmt", "yuv420p10le", "-color_primaries", "bt2020", "-color_trc", "smpte2084",
                    "-colorspace",
                    "bt2020nc", "-tag:v", "hvc1",
                ]),
        Clip(
            "hevc-10bit-hlg.mkv", "libx265",
            source() + x265
                + [
                    "-pix_fmt", "yuv420p10le", "-color_primaries", "bt2020", "-color_trc", "arib-std-b67",
                    "-colorspace",
                    "bt2020nc",
                ]),
        Clip(
            "vp9.webm", "libvpx-vp9",
            source(audio: true) + [
                "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-c:a", "libopus",
            ]),
        Clip(
            "av1.webm", "libaom-av1", source() + ["-c:v", "libaom-av1", "-cpu-used", "8", "-row-mt", "1"]),
        Clip("mpeg2.ts", "mpeg2video", source(audio: true) + ["-c:v", "mpeg2video", "-c:a", "mp2"]),
        Clip("mpeg2.mkv", "mpeg2video", source() + ["-c:v", "mpeg2video", "-bf", "2"]),
        Clip("mpeg4-sp.avi", "mpeg4", source(audio: true) + ["-c:v", "mpeg4", "-c:a", "libmp3lame"]),
        Clip("h264-in.ts", "libx264", source(audio: true) + x264 + ["-c:a", "aac"]),
        // The seeds' supported formats, row by row: H.264 Baseline 3.0 up to 640×480 at 30 fps, MPEG-4 Part 2 Simple
        // Profile, in .mov, .mp4, .m4v and .3gp, with AAC-LC and MP3 up to 48 kHz stereo.
        seeds("h264-baseline30-640x480.mp4", size: "640x480", audio: ["-c:a", "aac", "-ac", "2"]),
        seeds("h264-baseline30.m4v", size: "640x480", audio: ["-c:a", "aac", "-ac", "2", "-f", "mp4"]),
        seeds(
            "h264-mp3.mov", size: "320x240", audio: ["-c:a", "libmp3lame", "-ar", "48000", "-ac", "2"]),
        seeds("h264-aac.3gp", size: "320x240", audio: ["-c:a", "aac", "-ac", "2", "-ar", "44100"]),
        seeds("mpeg4-sp.mp4", mpeg4: true, size: "640x480", audio: ["-c:a", "aac", "-ac", "2"]),
        seeds(
            "mpeg4-sp.3gp", mpeg4: true, size: "176x144", rate: 15,
            audio: ["-c:a", "aac", "-ac", "1", "-ar", "8000"]),
        seeds("mpeg4-sp.mov", mpeg4: true, size: "320x240", audio: ["-c:a", "libmp3lame", "-ac", "2"]),
        // Timing: variable frame rate, audio that starts late, very short files.
        Clip(
            "vfr.mkv", "libx264",
            source(rate: 25) + [
                "-vf", "settb=1/1000,setpts='N*40+mod(N\\,3)*10'", "-fps_mode", "passthrough",
            ] + x264),
        lateAudio("late-audio.mp4", ["-c:a", "aac"]),
        lateAudio("late-audio.mkv", ["-c:a", "libvorbis"]),
        Clip("one-frame.mp4", "libx264", source() + x264 + ["-frames:v", "1"]),
        Clip("two-frames.mkv", "libx264", source() + x264 + ["-frames:v", "2"]),
        Clip("three-frames.ts", "mpeg2video", source() + ["-c:v", "mpeg2video", "-frames:v", "3"]),
    ]

    func testEveryCorpusFileIsPresentedAsFFmpegDecodesIt() throws {
        let (receiver, _) = try lab.startRecordingReceiver(
            work: work, extra: ["--timing-log", "\(work!)/timing.log"])
        let encoders = try runCommand(["ffmpeg", "-hide_banner", "-encoders"]).stdout
        var made: [String] = []
        for clip in Self.corpus {
            guard encoders.contains(" \(clip.encoder) ") else {
                print("\(clip.name): skipped, this ffmpeg has no \(clip.encoder) encoder")
                continue
            }
            let path = "\(work!)/\(clip.name)"
            let result = try runCommand(
                ["ffmpeg", "-v", "error", "-y"] + clip.arguments + [path], timeout: 60)
            XCTAssertEqual(result.status, 0, "\(clip.name): \(result.stderr)")
            if result.status == 0 { made.append(path) }
        }
        // An edit list: a cut that begins between key frames keeps the frames before it, marked to be dropped.
        let cut = "\(work!)/edit-list.mp4"
        let whole = "\(work!)/h264-high-bframes.mkv"
        let cutting = try runCommand([
            "ffmpeg", "-v", "error", "-y", "-ss", "0.35", "-i", whole, "-c", "copy", cut,
        ])
        XCTAssertEqual(cutting.status, 0, cutting.stderr)
        made.append(cut)

        var table: [String] = []
        for path in made {
            let name = URL(fileURLWithPath: path).lastPathComponent
            let played = try play(path)
            let reference = try Media.ffmpegFrameMD5(path)
            let frames = reference.filter { !$0.hasPrefix("#") }.count
            let same = played.frames == reference
            table.append(
                name.padding(toLength: 36, withPad: " ", startingAt: 0)
                    + "\(same ? "same" : "DIFFERENT") \(frames) frames, exit \(played.status)")
            XCTAssertEqual(played.status, 0, "\(name): \(played.output.suffix(400))")
            XCTAssertEqual(played.frames, reference, "\(name)")
            XCTAssertGreaterThan(frames, 0, name)
            if name.hasPrefix("late-audio") {
                // The sound begins with the picture of its time (about 0.5 s; ffprobe's start time of the audio
                // stream), not with the first picture: castd's timing log places both on CLOCK_MONOTONIC (the
                // capture holds the bytes, not when they were heard).
                let probe = try runCommand(
                    [
                        "ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries",
                        "stream=start_time", "-of",
                        "csv=p=0", path,
                    ])
                let start = try XCTUnwrap(
                    Double(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), name)
                XCTAssertEqual(start, 0.5, accuracy: 0.05, "\(name): the audio starts late")
                let offset = try Self.lateAudioOffset(timingLog: "\(work!)/timing.log", audioStart: start)
                table[table.count - 1] += String(
                    format: ", sound %+.1f ms from its picture", (offset ?? .nan) * 1000)
                XCTAssertEqual(
                    offset ?? .nan, 0, accuracy: 0.02, "\(name): the sound against the picture of its time")
            }
        }
        receiver.stop()
        print(
            "video corpus, castd's presented frames against ffmpeg -f framemd5:\n"
                + table.joined(separator: "\n"))
    }

    /// Phone videos: the pictures are stored as the sensor saw them, with a display matrix saying how to turn them.
    /// castd shows them turned as `ffmpeg -i` autorotates them (bit for bit) and reports the turned size.
    func testRotatedPhoneVideosAreShownUprightAsFFmpegTurnsThem() throws {
        let (receiver, _) = try lab.startRecordingReceiver(work: work)
        let plain = "\(work!)/portrait-source.mp4"
        let made = try runCommand(
            ["ffmpeg", "-v", "error", "-y"] + Self.source(size: "96x64", audio: true) + Self.x264 + [
                "-c:a", "aac", plain,
            ])
        XCTAssertEqual(made.status, 0, made.stderr)
        var clips: [(path: String, size: (Int, Int))] = []
        for degrees in [90, 180, 270] {
            // What a phone writes: the MP4 track's matrix (FFmpeg 5.1 sets it from the rotate tag on a stream copy).
            let path = "\(work!)/rotate-\(degrees).mp4"
            let tagged = try runCommand(
                [
                    "ffmpeg", "-v", "error", "-y", "-i", plain, "-c", "copy", "-metadata:s:v:0",
                    "rotate=\(degrees)", path,
                ])
            XCTAssertEqual(tagged.status, 0, tagged.stderr)
            clips.append((path, degrees == 180 ? (96, 64) : (64, 96)))
        }
        // Mirrored pictures (a front camera's selfie): matrices that flip, written into the track header; and a
        // camera held at 30°, which ffmpeg turns with its rotate filter (the size kept, the corners black).
        let (cosine, sine) = (cos(Double.pi / 6), sin(Double.pi / 6))
        for (name, matrix, size) in [
            ("mirror", [-1, 0, 0, 1], (96, 64)), ("transpose", [0, 1, 1, 0], (64, 96)),
            ("upside-down-mirror", [1, 0, 0, -1], (96, 64)), ("tilted-30", [cosine, sine, -sine, cosine], (96, 64)),
        ] {
            let path = "\(work!)/\(name).mp4"
            try Self.writeTrackMatrix(from: plain, to: path, matrix)
            clips.append((path, size))
        }
        for (path, size) in clips {
            let name = URL(fileURLWithPath: path).lastPathComponent
            let played = try play(path)
            XCTAssertEqual(played.status, 0, "\(name): \(played.output.suffix(400))")
            let reference = try Media.ffmpegFrameMD5(path)
            XCTAssertTrue(
                reference.contains("#dimensions 0: \(size.0)x\(size.1)"), "\(name): \(reference.prefix(8))")
            XCTAssertEqual(played.frames, reference, name)
            let sizes = played.output.split(separator: "\n").filter {
                $0.contains(#""event":"naturalSize""#)
            }
            XCTAssertFalse(sizes.isEmpty, name)
            for line in sizes {
                XCTAssertTrue(
                    line.contains(#""width":\#(size.0)"#) && line.contains(#""height":\#(size.1)"#),
                    "\(name): \(line)")
            }
            print(
                "\(name): \(reference.filter { !$0.hasPrefix("#") }.count) frames as ffmpeg turns them, \(sizes)"
            )
        }
        receiver.stop()
    }

    /// Sends `path` to the lab's receiver and returns cast's exit status and output, and the presented frames.
    private func play(_ path: String) throws -> (status: Int32, output: String, frames: [String]) {
        try? FileManager.default.removeItem(atPath: "\(work!)/frames.md5")
        let sent = try lab.run(
            on: .phone, [Paths.cast, "send", path, "--to", "Living Room", "--json"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"], timeout: 60)
        let listing = (try? String(contentsOfFile: "\(work!)/frames.md5", encoding: .utf8)) ?? ""
        return (sent.status, sent.stdout + sent.stderr, Media.comparable(listing))
    }

    /// From castd's timing log (docs/video-output.md): when the first audio sample is heard (the first write's time
    /// plus its latency, less what it wrote, 48 kHz), minus when the picture at `audioStart` was presented (the
    /// line of the last frame at or before it, advanced to `audioStart` at the picture rate), in seconds.
    private static func lateAudioOffset(timingLog path: String, audioStart: Double) throws -> Double? {
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map {
            $0.split(separator: " ")
        }
        guard let audio = lines.first(where: { $0.first == "audio" && $0.count == 4 }),
            let frames = Double(audio[1]), let at = Double(audio[2]), let latency = Double(audio[3])
        else { return nil }
        let heard = (at + latency) / 1e9 - frames / 48000
        let pictures = lines.compactMap { line -> (pts: Double, at: Double)? in
            guard line.first == "video", line.count == 3, let pts = Double(line[1]),
                let at = Double(line[2])
            else {
                return nil
            }
            return (pts, at / 1e9)
        }
        guard let before = pictures.last(where: { $0.pts <= audioStart + 1e-6 }) else { return nil }
        return heard - (before.at + (audioStart - before.pts))
    }

    /// Copies an MP4 and sets its first track's matrix (a b c d of `tkhd`, 16.16 fixed point; the translation stays
    /// 0), as a camera that stores the picture mirrored would.
    private static func writeTrackMatrix(from source: String, to path: String, _ abcd: [Double]) throws {
        var data = try Data(contentsOf: URL(fileURLWithPath: source))
        guard let box = data.range(of: Data("tkhd".utf8)) else {
            throw XCTSkip("no tkhd box in \(source)")
        }
        // After the type: version and flags (4), then times and ids (20 bytes in version 0, 32 in version 1),
        // reserved (8), layer, group, volume, reserved (8): the matrix is a b u c d v x y w, big-endian.
        let version = data[box.upperBound]
        let matrix = box.upperBound + 4 + (version == 1 ? 32 : 20) + 8 + 8
        for (index, value) in zip([0, 1, 3, 4], abcd) {
            let fixed = UInt32(bitPattern: Int32((value * 65536).rounded())).bigEndian
            withUnsafeBytes(of: fixed) { bytes in
                data.replaceSubrange(matrix + index * 4..<matrix + index * 4 + 4, with: bytes)
            }
        }
        try data.write(to: URL(fileURLWithPath: path))
    }
}
