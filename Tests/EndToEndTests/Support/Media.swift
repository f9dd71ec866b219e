import Foundation
import XCTest

/// Test media made with ffmpeg (nothing large is committed), and checks of what the receiver played.
enum Media {
    /// A folder with the clips, made once per test run.
    static let folder: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("cast-e2e-media-\(getpid())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    /// An MP3 of a 440 Hz tone (48 kHz) with a blue 300×300 cover (an attached PNG picture), titled "Blue Song" by
    /// "The Tones", in `folder`.
    static func songWithCoverArt(in folder: String, seconds: Int) throws -> String {
        let cover = "\(folder)/cover-art.png"
        let song = "\(folder)/song-\(seconds).mp3"
        for command in [
            [
                "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=blue:s=300x300:d=1", "-frames:v", "1",
                cover,
            ],
            [
                "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
                "sine=frequency=440:sample_rate=48000:duration=\(seconds)",
                "-i", cover, "-map", "0", "-map", "1", "-c:a", "libmp3lame", "-c:v", "png", "-disposition:v",
                "attached_pic",
                "-metadata", "title=Blue Song", "-metadata", "artist=The Tones", song,
            ],
        ] {
            let made = try runCommand(command)
            guard made.status == 0 else { throw MediaError(message: "ffmpeg: \(made.stderr)") }
        }
        return song
    }

    /// Makes (once) a clip of `seconds` with a 440 Hz tone and/or a test pattern.
    static func clip(_ name: String, seconds: Int = 5, audio: Bool = true, video: Bool = true, extra: [String] = [])
        throws -> String
    {
        let path = folder.appendingPathComponent(name).path
        if FileManager.default.fileExists(atPath: path) { return path }
        var arguments = ["ffmpeg", "-v", "error", "-y"]
        if video { arguments += ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=\(seconds)"] }
        if audio { arguments += ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=\(seconds)"] }
        if video { arguments += ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-g", "25"] }
        if audio { arguments += ["-c:a", "aac"] }
        arguments += extra + [path]
        let result = try runCommand(arguments, timeout: 60)
        guard result.status == 0 else { throw MediaError(message: "ffmpeg failed: \(result.stderr)") }
        return path
    }

    /// ffmpeg's framemd5 of the file's video, without the `#software` line (it names the library build).
    static func ffmpegFrameMD5(_ path: String) throws -> [String] {
        comparable(try runCommand(["ffmpeg", "-v", "error", "-i", path, "-map", "0:v", "-f", "framemd5", "-"]).stdout)
    }

    /// The lines of a framemd5 listing that must match: all but `#software`.
    static func comparable(_ listing: String) -> [String] {
        listing.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#software") }
    }

    /// The ALSA configuration with `castcapture:FILE=…` (S16_LE, 48 kHz, stereo).
    static let alsaConfig = Paths.package.appendingPathComponent("scripts/asound.conf").path

    /// Frequency of channel 0 of S16_LE stereo 48 kHz audio, from its zero crossings.
    static func toneFrequency(ofCapture data: Data) -> Double {
        let samples = data.withUnsafeBytes { raw -> [Int16] in
            let all = raw.bindMemory(to: Int16.self)
            return stride(from: 0, to: all.count - 1, by: 2).map { Int16(littleEndian: all[$0]) }
        }
        var crossings = 0
        for i in 1..<samples.count where (samples[i - 1] < 0) != (samples[i] < 0) { crossings += 1 }
        return Double(crossings) / 2 / (Double(samples.count) / 48000)
    }

    struct MediaError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }
}
