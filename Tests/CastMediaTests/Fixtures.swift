import CastMedia
import CastProtocol
import CastTestSupport
import Foundation
import XCTest

/// Test media made with the ffmpeg tool, and an ALSA configuration that captures what reaches the device.
enum Fixtures {
    /// A fresh folder for one test.
    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("castmedia-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Runs a tool and returns its standard output; fails the test when it exits non-zero.
    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) throws -> Data {
        try toolOutput([tool] + arguments)
    }

    private static let video = ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=2"]
    private static let audio = ["-f", "lavfi", "-i", "sine=frequency=440:duration=2"]

    /// A 2 s H.264/AAC mp4 (320×240, 25 fps, 440 Hz).
    static func h264AAC(in folder: URL, name: String = "clip.mp4", extra: [String] = []) throws -> String {
        let path = folder.appendingPathComponent(name).path
        try run(
            "ffmpeg",
            ["-v", "error", "-y"] + video + audio
                + ["-c:v", "libx264", "-c:a", "aac", "-shortest", "-pix_fmt", "yuv420p"] + extra + [path])
        return path
    }

    /// A 2 s H.264 mp4 without audio.
    static func videoOnly(in folder: URL) throws -> String {
        let path = folder.appendingPathComponent("video.mp4").path
        try run("ffmpeg", ["-v", "error", "-y"] + video + ["-c:v", "libx264", "-pix_fmt", "yuv420p", path])
        return path
    }

    /// A 2 s AAC .m4a without video.
    static func audioOnly(in folder: URL) throws -> String {
        let path = folder.appendingPathComponent("tone.m4a").path
        try run("ffmpeg", ["-v", "error", "-y"] + audio + ["-c:a", "aac", path])
        return path
    }

    /// ffmpeg's own framemd5 of the file's video.
    static func ffmpegFrameMD5(_ path: String) throws -> String {
        String(
            decoding: try run("ffmpeg", ["-v", "error", "-i", path, "-map", "0:v", "-f", "framemd5", "-"]),
            as: UTF8.self)
    }

    /// The lines of a framemd5 listing without the `#software` line, which names the library version.
    static func comparable(_ listing: String) -> [String] {
        listing.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#software") }
    }

    /// Points ALSA at a configuration defining `null` and `castcapture:FILE=…[,CHANNELS=N]` (plug → S16_LE 48 kHz
    /// stereo or N channels → file over null), in a file of this process's own (another test run must not rewrite
    /// it under ALSA, which reloads a changed configuration). Must run before the process opens any PCM; later
    /// calls do nothing.
    static let alsaConfiguration: Void = {
        let name = "castmedia-asound-\(getpid()).conf"
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(name).path
        let text = """
            pcm.null { type null }
            pcm.castcapture {
                @args [ FILE CHANNELS ]
                @args.FILE { type string }
                @args.CHANNELS { type integer default 2 }
                type plug
                slave {
                    pcm {
                        type file
                        slave.pcm { type null }
                        file $FILE
                        format "raw"
                    }
                    format S16_LE
                    rate 48000
                    channels $CHANNELS
                }
            }
            # Six channels in the order an HDMI output may report (snd_pcm_get_chmap), not ALSA's usual one.
            pcm.castcapturehdmi {
                @args [ FILE ]
                @args.FILE { type string }
                type plug
                slave {
                    pcm {
                        type file
                        slave.pcm { type null chmap [ "FL,FR,LFE,FC,SL,SR" ] }
                        file $FILE
                        format "raw"
                    }
                    format S16_LE
                    rate 48000
                    channels 6
                }
            }

            """
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        setenv("ALSA_CONFIG_PATH", path, 1)
    }()

    /// The six-channel device whose channel map says FL FR LFE FC SL SR, capturing into `file`.
    static func mappedCaptureDevice(_ file: String) -> String {
        _ = alsaConfiguration
        return "castcapturehdmi:FILE=\"\(file)\""
    }

    /// The ALSA device name that captures into `file` (S16_LE, 48 kHz, `channels` channels).
    static func captureDevice(_ file: String, channels: Int = 2) -> String {
        _ = alsaConfiguration
        return "castcapture:FILE=\"\(file)\",CHANNELS=\(channels)"
    }
}

/// Collects a player's events, thread-safely.
typealias EventLog = CastTestSupport.EventLog<PlaybackEvent>

extension CastTestSupport.EventLog where Event == PlaybackEvent {
    /// The finish event, if any.
    var finish: (reason: FinishReason, error: String?)? {
        for event in events { if case .finished(let reason, let error, _) = event { return (reason, error) } }
        return nil
    }
}

/// Plays `source` to its end and returns the events and the wall time it took.
func play(
    _ source: any MediaSource, audio: AudioOutput = .none, video: VideoOutput = .none, audioChannels: Int = 2,
    timeout: Double = 20
) throws -> (log: EventLog, seconds: Double) {
    let log = EventLog()
    var configuration = PlayerConfiguration(audio: audio, video: video)
    configuration.audioChannels = audioChannels
    let player = Player(source: source, configuration: configuration) {
        log.append($0)
    }
    return (log, try playToEnd(player, timeout: timeout))
}

/// Stops `player` and waits until it finished; returns the wall time that took (seconds).
func stopAndWait(_ player: Player) -> Double {
    let stopping = Date()
    player.stop()
    player.waitUntilFinished()
    return Date().timeIntervalSince(stopping)
}

/// Starts `player` and waits until it finished; returns the wall time it took (seconds).
/// - Throws: when it has not finished after `timeout` seconds (a hang bound; the player is stopped).
func playToEnd(_ player: Player, timeout: Double) throws -> Double {
    let started = Date()
    player.start()
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        player.waitUntilFinished()
        done.signal()
    }
    guard done.wait(timeout: .now() + timeout) == .success else {
        player.stop()
        throw NSError(domain: "play", code: 1, userInfo: [NSLocalizedDescriptionKey: "player hung"])
    }
    return Date().timeIntervalSince(started)
}
