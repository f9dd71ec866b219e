import CastProtocol
import Foundation
import XCTest

/// Play, end to end: `cast send` on the phone, castd on the box, FFmpeg decoding, ALSA capturing
/// the bytes that were played, framemd5 recording the frames that were presented.
final class PlayTests: XCTestCase {
    private var lab: Lab!
    private var work: String!
    private var receiver: Daemon!
    private var port: UInt16 = 0

    override func setUpWithError() throws {
        lab = try Lab("e2p\(getpid() % 100000)")
        work = NSTemporaryDirectory() + "cast-play-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        (receiver, port) = try lab.startRecordingReceiver(work: work)
    }

    override func tearDown() {
        lab?.tearDown()
        if let work { try? FileManager.default.removeItem(atPath: work) }
    }

    private func send(_ arguments: [String], input: Data? = nil, timeout: Double = 60) throws -> CommandResult {
        try lab.run(
            on: .phone, [Paths.cast, "send"] + arguments,
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"], timeout: timeout)
    }

    private func sendViaShell(_ command: String, timeout: Double = 60) throws -> CommandResult {
        try lab.run(
            on: .phone, ["sh", "-c", command], environment: ["XDG_CONFIG_HOME": "\(work!)/sender"], timeout: timeout)
    }

    private func events(_ jsonLines: String) throws -> [PlaybackEvent] {
        try jsonLines.split(separator: "\n").map { try JSONDecoder().decode(PlaybackEvent.self, from: Data($0.utf8)) }
    }

    /// The events' names in order, positions left out.
    private func names(_ events: [PlaybackEvent]) -> [String] {
        events.filter { if case .position = $0 { false } else { true } }.map(\.name)
    }

    /// Checks the outcome of playing `clip` (seconds long) to the end.
    private func assertPlayed(
        _ clip: String, seconds: Double, result: CommandResult, audio: Bool, video: Bool, line: UInt = #line
    ) throws {
        XCTAssertEqual(result.status, 0, result.stderr, line: line)
        let received = try events(result.stdout)
        XCTAssertEqual(received.last, .finished(reason: .playbackEnded, error: nil), line: line)
        // The milestones come in this order (other events may come between them).
        let milestones: [PlaybackEvent] =
            [.loadState([.playable])] + (video ? [.readyForDisplay] : []) + [.playbackState(.playing)]
            + (video ? [.videoActive(true), .videoActive(false)] : []) + [.playbackState(.stopped)]
        let indices = milestones.map { milestone in received.firstIndex(of: milestone) ?? -1 }
        XCTAssertFalse(indices.contains(-1), "missing milestones: \(names(received))", line: line)
        XCTAssertEqual(indices, indices.sorted(), "out of order: \(names(received))", line: line)
        let order = names(received)
        let states = received.compactMap { event -> PlaybackState? in
            if case .playbackState(let state) = event { return state }
            return nil
        }
        XCTAssertEqual(states, [.playing, .stopped], line: line)
        XCTAssertTrue(
            received.contains(.mediaTypes((audio ? [.audio] : []) + (video ? [.video] : []))), "\(order)", line: line)
        let positions = received.compactMap { event -> Double? in
            if case .position(let seconds, _) = event { return seconds }
            return nil
        }
        XCTAssertGreaterThanOrEqual(
            Double(positions.count), seconds * 4 - 2, "positions: \(positions.count)", line: line)
        XCTAssertEqual(positions, positions.sorted(), line: line)

        // The receiver's own log carries the same events.
        let logged = try events(String(contentsOfFile: "\(work!)/events.jsonl", encoding: .utf8))
        XCTAssertEqual(names(logged), names(received), line: line)

        // Real time: the clip's duration within 10 %, plus start-up.
        XCTAssertGreaterThan(result.seconds, seconds * 0.9, line: line)
        XCTAssertLessThan(result.seconds, seconds * 1.1 + 2, line: line)

        if video {
            let frames = Media.comparable(try String(contentsOfFile: "\(work!)/frames.md5", encoding: .utf8))
            XCTAssertEqual(frames, try Media.ffmpegFrameMD5(clip), line: line)
            XCTAssertGreaterThan(frames.count, Int(seconds) * 25 - 1, line: line)
        }
        if audio {
            let pcm = try Data(contentsOf: URL(fileURLWithPath: "\(work!)/audio.raw"))
            let playedSeconds = Double(pcm.count) / (48000 * 4)
            XCTAssertEqual(playedSeconds, seconds, accuracy: seconds * 0.02, "bytes: \(pcm.count)", line: line)
            XCTAssertEqual(Media.toneFrequency(ofCapture: pcm), 440, accuracy: 440 * 0.02, line: line)
        }
    }

    func testH264AACMovieByName() throws {
        let clip = try Media.clip("movie.mp4")
        let result = try send([clip, "--to", "living room", "--json"])
        try assertPlayed(clip, seconds: 5, result: result, audio: true, video: true)
        print("sent 5 s movie in \(String(format: "%.2f", result.seconds)) s")
    }

    func testAudioOnlyFile() throws {
        let clip = try Media.clip("tone.m4a", audio: true, video: false)
        let result = try send([clip, "--to", "\(lab.address(.box)):\(port)", "--json"])
        try assertPlayed(clip, seconds: 5, result: result, audio: true, video: false)
    }

    /// An MP3 with cover art: the picture is presented at the start (ffmpeg's own decode of it, bit for bit) and the
    /// whole song plays; it used to be decoded only at the end of the input, and never shown.
    func testCoverArtIsPresentedAndTheSongPlays() throws {
        let song = try Media.songWithCoverArt(in: work!, seconds: 3)
        let result = try send([song, "--to", "Living Room", "--json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains(#""reason":"playbackEnded""#), result.stdout)
        let frames = Media.comparable(try String(contentsOfFile: "\(work!)/frames.md5", encoding: .utf8))
        let reference = try Media.ffmpegFrameMD5(song)
        XCTAssertEqual(reference.filter { !$0.hasPrefix("#") }.count, 1, "ffmpeg decodes one picture")
        // The picture, bit for bit, at the start, in the same format (the duration column of a still differs: the
        // engine holds the picture for the song, ffmpeg writes one tick).
        XCTAssertEqual(frames.filter { $0.hasPrefix("#") }, reference.filter { $0.hasPrefix("#") })
        func picture(_ lines: [String]) -> [String] {
            lines.filter { !$0.hasPrefix("#") }.map { line in
                let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                return [fields[2], fields[4], fields[5]].joined(separator: " ")
            }
        }
        XCTAssertEqual(picture(frames), picture(reference))
        let pcm = try Data(contentsOf: URL(fileURLWithPath: "\(work!)/audio.raw"))
        XCTAssertEqual(Double(pcm.count) / (48000 * 4), 3, accuracy: 0.1, "bytes: \(pcm.count)")
        XCTAssertEqual(Media.toneFrequency(ofCapture: pcm), 440, accuracy: 440 * 0.02)
    }

    /// An MKV of `seconds` with two AAC tracks: English (default) a 440 Hz tone, French 880 Hz.
    private func twoLanguageFilm(seconds: Int) throws -> String {
        let film = "\(work!)/two-languages-\(seconds)s.mkv"
        let made = try runCommand([
            "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
            "sine=frequency=440:sample_rate=48000:duration=\(seconds)", "-f", "lavfi", "-i",
            "sine=frequency=880:sample_rate=48000:duration=\(seconds)", "-map", "0", "-map", "1", "-c:a", "aac",
            "-metadata:s:a:0", "language=eng", "-metadata:s:a:1", "language=fra", "-disposition:a:0", "default",
            "-disposition:a:1", "0", film,
        ])
        XCTAssertEqual(made.status, 0, made.stderr)
        return film
    }

    /// A film with two audio languages: `--audio-lang` picks the track (3 or 2 letters); without it, the default
    /// track plays, as ffmpeg picks it; a language no track has plays the default too; a malformed code is a usage
    /// error (exit 2), found before anything is sent.
    func testAudioLanguageChoosesTheTrack() throws {
        let film = try twoLanguageFilm(seconds: 2)
        for (arguments, frequency) in [
            ([], 440.0), (["--audio-lang", "fra"], 880), (["--audio-lang", "FR"], 880),
            (["--audio-lang", "eng"], 440), (["--audio-lang", "deu"], 440),
        ] {
            let result = try send([film, "--to", "Living Room"] + arguments)
            XCTAssertEqual(result.status, 0, "\(arguments): \(result.stderr)")
            let pcm = try Data(contentsOf: URL(fileURLWithPath: "\(work!)/audio.raw"))
            let heard = Media.toneFrequency(ofCapture: pcm)
            print("cast send \(arguments.joined(separator: " ")): \(String(format: "%.1f", heard)) Hz")
            // The two tracks are an octave apart; the zero-crossing estimate of AAC's 880 Hz reads about 4 % high.
            XCTAssertEqual(heard, frequency, accuracy: frequency * 0.08, "\(arguments)")
            try? FileManager.default.removeItem(atPath: "\(work!)/audio.raw")
        }
        for bad in ["french", "f", "fr1"] {
            let refused = try send([film, "--to", "Living Room", "--audio-lang", bad])
            XCTAssertEqual(refused.status, 2, "\(bad): \(refused.stderr)")
        }
    }

    /// `cast audio NAME fra` while a film plays: the capture holds the English track's 440 Hz before the switch and
    /// the French track's 880 Hz after it; a malformed language is exit 2.
    func testAudioTrackSwitchesWhilePlaying() throws {
        let film = try twoLanguageFilm(seconds: 8)
        let env = ["XDG_CONFIG_HOME": "\(work!)/sender"]
        let sender = try lab.start(
            on: .phone, [Paths.cast, "send", film, "--to", "Living Room", "--json"], environment: env)
        XCTAssertNotNil(sender.waitForLine(containing: #""position":2."#, timeout: 20), "\(sender.output.suffix(5))")
        let switched = try lab.run(on: .phone, [Paths.cast, "audio", "Living Room", "fra"], environment: env)
        XCTAssertEqual(switched.status, 0, switched.stderr)
        // cast status lists both tracks, the French one playing (the demux thread switches at the seek it asked for).
        var status = try lab.run(on: .phone, [Paths.cast, "status", "Living Room"], environment: env)
        for _ in 0..<50 where !status.stdout.contains("track: audio #1 fra aac (playing)") {
            Thread.sleep(forTimeInterval: 0.05)
            status = try lab.run(on: .phone, [Paths.cast, "status", "Living Room"], environment: env)
        }
        XCTAssertTrue(status.stdout.contains("track: audio #1 fra aac (playing)"), status.stdout)
        XCTAssertTrue(status.stdout.contains("track: audio #0 eng aac\n"), status.stdout)
        XCTAssertEqual(sender.waitForExit(timeout: 30), 0, "\(sender.output.suffix(5))")
        let pcm = try Data(contentsOf: URL(fileURLWithPath: "\(work!)/audio.raw"))
        let second = 48000 * 4
        XCTAssertGreaterThan(pcm.count, 7 * second)
        let before = Media.toneFrequency(ofCapture: pcm.subdata(in: 0..<(3 * second / 2)))
        let after = Media.toneFrequency(ofCapture: pcm.subdata(in: (pcm.count - 3 * second)..<pcm.count))
        print(String(format: "cast audio fra: %.1f Hz before, %.1f Hz after (%d bytes)", before, after, pcm.count))
        XCTAssertEqual(before, 440, accuracy: 440 * 0.08)
        XCTAssertEqual(after, 880, accuracy: 880 * 0.08)
        XCTAssertEqual(
            try lab.run(on: .phone, [Paths.cast, "audio", "Living Room", "french"], environment: env).status, 2)
    }

    func testVideoOnlyFile() throws {
        let clip = try Media.clip("pattern.mkv", audio: false, video: true)
        let result = try send([clip, "--to", "Living Room", "--json"])
        try assertPlayed(clip, seconds: 5, result: result, audio: false, video: true)
    }

    func testStandardInput() throws {
        let clip = try Media.clip("stream.ts", extra: ["-f", "mpegts"])
        let result = try sendViaShell("cat '\(clip)' | '\(Paths.cast)' send - --to 'Living Room' --json")
        try assertPlayed(clip, seconds: 5, result: result, audio: true, video: true)
    }

    func testMissingFileFailsWithoutConnecting() throws {
        let result = try send(["\(work!)/no-such-file.mp4", "--to", "Living Room"])
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.stderr.contains("cannot open"), result.stderr)
        XCTAssertTrue(result.stderr.contains("No such file"), result.stderr)
        XCTAssertFalse(receiver.output.contains { $0.contains("connected from") }, "\(receiver.output)")
    }

    func testUnplayableAndTruncatedFilesAreErrorsAndTheNextSendPlays() throws {
        let text = "\(work!)/notes.mp4"
        try Data("these are not the frames you are looking for\n".utf8).write(to: URL(fileURLWithPath: text))
        let good = try Media.clip("short.mp4", seconds: 2)
        let truncated = "\(work!)/truncated.mp4"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: good))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: truncated))

        for bad in [text, truncated] {
            let result = try send([bad, "--to", "Living Room", "--json"])
            XCTAssertEqual(result.status, 1, "\(bad): \(result.stderr)")
            guard case .finished(.playbackError, let message, _)? = try events(result.stdout).last else {
                return XCTFail("\(bad): \(result.stdout)")
            }
            XCTAssertTrue(message?.contains("Invalid data") ?? false, message ?? "")
            XCTAssertTrue(result.stderr.contains("playback failed"), result.stderr)
        }
        XCTAssertTrue(receiver.isRunning)
        try? FileManager.default.removeItem(atPath: "\(work!)/frames.md5")
        try? FileManager.default.removeItem(atPath: "\(work!)/events.jsonl")
        try? FileManager.default.removeItem(atPath: "\(work!)/audio.raw")
        // castd opened the framemd5 file at start... the next send must still play correctly.
        let result = try send([good, "--to", "Living Room", "--json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try events(result.stdout).last, .finished(reason: .playbackEnded, error: nil))
    }

    func testSenderVanishingMidPlayStopsTheReceiver() throws {
        let clip = try Media.clip("long.mp4", seconds: 20)
        let sender = try lab.start(
            on: .phone, [Paths.cast, "send", clip, "--to", "Living Room", "--json"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        XCTAssertNotNil(sender.waitForLine(containing: "\"position\"", timeout: 15), "\(sender.output)")
        kill(sender.pid, SIGKILL)
        let start = Date()
        XCTAssertNotNil(
            receiver.waitForLine(containing: "finished: playbackError (the sender was lost)", timeout: 10),
            "\(receiver.output)")
        XCTAssertLessThan(Date().timeIntervalSince(start), 5)
        let logged = try events(String(contentsOfFile: "\(work!)/events.jsonl", encoding: .utf8))
        XCTAssertEqual(logged.last, .finished(reason: .playbackError, error: "the sender was lost"))
        let status = try lab.run(
            on: .phone, [Paths.cast, "status", "Living Room"], environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        XCTAssertTrue(status.stdout.contains("state: stopped"), status.stdout)
    }

    func testPauseResumeAndStopFromAnotherCastCommand() throws {
        let clip = try Media.clip("long.mp4", seconds: 20)
        let sender = try lab.start(
            on: .phone, [Paths.cast, "send", clip, "--to", "Living Room", "--json"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        XCTAssertNotNil(sender.waitForLine(containing: "\"position\"", timeout: 15), "\(sender.output)")
        func verb(_ name: String) throws -> CommandResult {
            try lab.run(
                on: .phone, [Paths.cast, name, "living room"], environment: ["XDG_CONFIG_HOME": "\(work!)/other"])
        }
        let pause = try verb("pause")
        XCTAssertEqual(pause.status, 0, pause.stderr)
        XCTAssertEqual(pause.stdout, "state: paused\n")
        XCTAssertNotNil(sender.waitForLine(containing: #""state":"paused""#, timeout: 2))
        let resume = try verb("resume")
        XCTAssertEqual(resume.stdout, "state: playing\n", resume.stderr)
        let stop = try verb("stop")
        XCTAssertEqual(stop.stdout, "state: stopped\n", stop.stderr)
        XCTAssertNotNil(sender.waitForLine(containing: #""reason":"userExited""#, timeout: 5), "\(sender.output)")
        let deadline = Date().addingTimeInterval(5)
        while sender.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        XCTAssertFalse(sender.isRunning)
        XCTAssertEqual(sender.exitStatus, 0)
        let nothing = try verb("pause")
        XCTAssertEqual(nothing.status, 1)
        XCTAssertTrue(nothing.stderr.contains("nothing plays"), nothing.stderr)
    }

    func testWatchFollowsAnotherSendersPlaybackAndListShowsPairing() throws {
        let watcher = try lab.start(
            on: .phone, [Paths.cast, "watch", "Living Room", "--json"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/watcher"])
        XCTAssertNotNil(watcher.waitForLine(containing: #""state":"stopped""#, timeout: 10), "\(watcher.output)")
        let clip = try Media.clip("short.mp4", seconds: 2)
        let result = try send([clip, "--to", "Living Room"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertNotNil(watcher.waitForLine(containing: #""reason":"playbackEnded""#, timeout: 5), "\(watcher.output)")
        let seen = watcher.output.compactMap { try? JSONDecoder().decode(PlaybackEvent.self, from: Data($0.utf8)) }
        XCTAssertTrue(seen.contains(.playbackState(.playing)), "\(watcher.output)")
        XCTAssertTrue(watcher.isRunning, "watch follows until interrupted")
        kill(watcher.pid, SIGINT)
        XCTAssertEqual(watcher.waitForExit(timeout: 5), 0)

        let list = try lab.run(on: .phone, [Paths.cast, "list"], environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        XCTAssertTrue(list.stdout.hasPrefix("NAME"), list.stdout)
        XCTAssertTrue(list.stdout.contains("PAIRED"), list.stdout)
        XCTAssertTrue(list.stdout.contains("  no"), "auth none: never paired: \(list.stdout)")
    }
}
