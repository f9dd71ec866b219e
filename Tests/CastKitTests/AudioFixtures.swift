import CastKit
import Foundation
import XCTest

/// Sound files and the ALSA capture for the audio and music player tests.
enum AudioFixtures {
    /// A sine tone of `seconds` as AAC in M4A (or MP3 with cover art), tagged.
    static func tone(
        _ name: String, seconds: Double = 1, frequency: Int = 440, tags: [String: String] = [:], artwork: Bool = false,
        in folder: URL
    ) throws -> URL {
        let url = folder.appendingPathComponent(name)
        var arguments = [
            "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
            "sine=frequency=\(frequency):sample_rate=48000:duration=\(seconds)",
        ]
        if artwork {
            arguments += [
                "-f", "lavfi", "-i", "color=c=red:size=64x64:duration=1", "-frames:v", "1", "-map", "0", "-map", "1",
                "-c:v", "png", "-disposition:v", "attached_pic", "-id3v2_version", "3",
            ]
        }
        for (key, value) in tags.sorted(by: { $0.key < $1.key }) { arguments += ["-metadata", "\(key)=\(value)"] }
        arguments.append(url.path)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "ffmpeg failed: \(arguments)")
        return url
    }

    /// Outputs that write what is played to `file` (S16_LE, 48 kHz, stereo: 192 000 bytes a second).
    static func capture(_ file: URL) -> MoviePlayerController.Outputs {
        _ = MovieFixtures.alsa
        return MoviePlayerController.Outputs(audioDevice: "castcapture:FILE=\(file.path)", video: .none)
    }

    /// Seconds of audio in a capture file.
    static func capturedSeconds(_ file: URL) -> Double {
        let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
        return Double(size) / 192_000
    }

    /// The peak amplitude (0...1) of channel 0 of a capture.
    static func peak(_ file: URL) -> Double {
        guard let data = try? Data(contentsOf: file) else { return 0 }
        let peak = data.withUnsafeBytes { raw -> Int in
            let samples = raw.bindMemory(to: Int16.self)
            return stride(from: 0, to: samples.count, by: 2).reduce(0) {
                max($0, abs(Int(Int16(littleEndian: samples[$1]))))
            }
        }
        return Double(peak) / 32768
    }
}

/// Records what an audio player tells its delegate, in order.
final class DelegateLog: AudioPlayerDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [String] = []

    var calls: [String] { lock.withLock { entries } }

    private func add(_ entry: String) { lock.withLock { entries.append(entry) } }

    func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool) { add("finish \(flag)") }
    func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: CastError?) { add("decodeError") }
    func audioPlayerBeginInterruption(_ player: AudioPlayer) { add("begin") }
    func audioPlayerEndInterruption(_ player: AudioPlayer, options: AudioPlayer.InterruptionOptions) {
        add(options.contains(.shouldResume) ? "end shouldResume" : "end")
    }
}

/// A delegate written with the seeds' (iOS) spellings only, as code ported from AVAudioPlayer has it.
final class SeedSpellingDelegateLog: AudioPlayerDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [String] = []

    var calls: [String] { lock.withLock { entries } }

    private func add(_ entry: String) { lock.withLock { entries.append(entry) } }

    func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool) { add("finish \(flag)") }
    func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: (any Error)?) {
        add("decodeError \(error != nil)")
    }
    func audioPlayerBeginInterruption(_ player: AudioPlayer) { add("begin") }
    func audioPlayerEndInterruption(_ player: AudioPlayer, withOptions flags: Int) { add("end withOptions \(flags)") }
}

/// The oldest spellings: the end of an interruption without options.
final class OldestSpellingDelegateLog: AudioPlayerDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [String] = []

    var calls: [String] { lock.withLock { entries } }

    func audioPlayerBeginInterruption(_ player: AudioPlayer) { lock.withLock { entries.append("begin") } }
    func audioPlayerEndInterruption(_ player: AudioPlayer) { lock.withLock { entries.append("end") } }
}
