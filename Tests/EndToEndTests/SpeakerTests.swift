import Foundation
import XCTest

/// `cast` and a real AirPlay 1 speaker: shairport-sync on the lab's box host (its own D-Bus and avahi there),
/// writing what it plays as raw PCM (`-o stdout`: S16_LE, 44.1 kHz, stereo) to a file the test reads.
final class SpeakerTests: XCTestCase {
    private var lab: Lab!
    private var work: String!
    private var speaker: Daemon!
    private var capture: String { "\(work!)/speaker.raw" }
    private let speakerName = "Kitchen Speaker"

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/shairport-sync") else {
            throw XCTSkip("shairport-sync is not installed (scripts/setup installs it)")
        }
        lab = try Lab("spk\(getpid() % 100000)")
        work = NSTemporaryDirectory() + "cast-speaker-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        // Our own configuration, never /etc/shairport-sync.conf; the log goes to standard error (-u).
        let config = "\(work!)/shairport-sync.conf"
        var settings = "general = { name = \"\(speakerName)\"; port = 5000; "
        if name.contains("SlowToStart") {
            // A volume hook that is waited for: shairport-sync's player thread, started by RECORD, reads the volume
            // it remembers (-18, about -40 dB here), runs the hook, then applies that volume. cast's SET_PARAMETER,
            // sent right after RECORD, is stored only after its own run of the hook (0.3 s), so the player reads -18
            // and applies it (after 1 s) over cast's volume. The hook only widens a window of a few microseconds
            // that a loaded machine opens now and then.
            settings +=
                #"run_this_when_volume_is_set = "/bin/sh -c 'case $0 in -18*) sleep 1;; *) sleep 0.3;; esac'"; "#
                + #"}; sessioncontrol = { wait_for_completion = "yes"; "#
        }
        try (settings + "};\n").write(toFile: config, atomically: true, encoding: .utf8)
        speaker = try lab.start(
            on: .box, ["sh", "-c", "exec shairport-sync -c \"$0\" -u -v -o stdout > \"$1\"", config, capture])
        // Advertised: cast list on the phone sees it as a speaker.
        let deadline = Date().addingTimeInterval(15)
        var seen = ""
        repeat {
            seen = (try? cast(["list", "--json"]).stdout) ?? ""
            if seen.contains(#""kind":"raop""#) { break }
            Thread.sleep(forTimeInterval: 0.2)
        } while Date() < deadline && speaker.isRunning
        XCTAssertTrue(
            seen.contains(#""kind":"raop""#), "no speaker in cast list: \(seen); shairport: \(speaker.output)")
    }

    override func tearDown() {
        lab?.tearDown()
        if let work { try? FileManager.default.removeItem(atPath: work) }
    }

    private func cast(_ arguments: [String], timeout: Double = 60) throws -> CommandResult {
        try lab.run(
            on: .phone, [Paths.cast] + arguments, environment: ["XDG_CONFIG_HOME": "\(work!)/sender"], timeout: timeout)
    }

    /// A sine tone clip made with ffmpeg.
    private func tone(_ name: String, frequency: Int = 1000, seconds: Int) throws -> String {
        let path = "\(work!)/\(name)"
        let made = try runCommand(
            [
                "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
                "sine=frequency=\(frequency):sample_rate=44100:duration=\(seconds)", path,
            ])
        XCTAssertEqual(made.status, 0, made.stderr)
        return path
    }

    /// Channel 0 of the capture (S16_LE stereo).
    private func captured() -> [Int16] {
        guard let data = FileManager.default.contents(atPath: capture) else { return [] }
        return data.withUnsafeBytes { raw in
            let all = raw.bindMemory(to: Int16.self)
            return stride(from: 0, to: all.count - 1, by: 2).map { Int16(littleEndian: all[$0]) }
        }
    }

    private func capturedFrames() -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: capture)[.size] as? Int) ?? 0) / 4
    }

    func testListShowsTheSpeakerAndATonePlaysAtItsFrequencyAndLength() throws {
        let table = try cast(["list"])
        XCTAssertEqual(table.status, 0, table.stderr)
        let row = try XCTUnwrap(table.stdout.split(separator: "\n").first { $0.hasPrefix(speakerName) }, table.stdout)
        XCTAssertTrue(row.contains("airplay speaker"), String(row))
        XCTAssertFalse(row.contains("@"), "the name is shown without its hardware-address prefix: \(row)")

        let clip = try tone("tone.wav", seconds: 5)
        let sent = try cast(["send", clip, "--to", speakerName, "--json"], timeout: 30)
        XCTAssertEqual(sent.status, 0, "\(sent.stderr)\n\(sent.stdout)")
        XCTAssertTrue(sent.stdout.contains(#""state":"playing""#), sent.stdout)
        XCTAssertTrue(sent.stdout.contains(#""reason":"playbackEnded""#), sent.stdout)
        XCTAssertTrue(sent.stdout.contains(#""event":"position""#), sent.stdout)

        let samples = captured()
        XCTAssertGreaterThan(samples.count, 44_100 * 4, "shairport-sync wrote \(samples.count) frames")
        // The tone is where the signal is loud: the sine is at 1/8 of full scale, sent unattenuated.
        let loud = samples.indices.filter { abs(Int(samples[$0])) > 2000 }
        let peak = samples.map { abs(Int($0)) }.max() ?? 0
        let first = try XCTUnwrap(
            loud.first,
            "no tone in the capture: \(samples.count) frames, peak \(peak)\n\(sent.stdout)\nshairport: \(speaker.output)"
        )
        let last = try XCTUnwrap(loud.last)
        let tone = samples[first...last]
        var crossings = 0
        for i in tone.indices.dropFirst() where (tone[i - 1] < 0) != (tone[i] < 0) { crossings += 1 }
        let seconds = Double(tone.count) / 44_100
        let frequency = Double(crossings) / 2 / seconds
        let lengthError = abs(seconds - 5) / 5 * 100
        print(
            "speaker capture: tone of \(String(format: "%.1f", frequency)) Hz for \(String(format: "%.4f", seconds)) s "
                + "(length error \(String(format: "%.2f", lengthError)) %), \(samples.count) frames in all")
        XCTAssertEqual(frequency, 1000, accuracy: 5)
        XCTAssertLessThan(lengthError, 3)

        // What a speaker cannot play is a usage error, found before any audio is sent.
        for arguments in [["http://10.0.0.1/song.mp3"], ["-"], [clip, "--volume", "2"]] {
            let refused = try cast(["send"] + arguments + ["--to", speakerName])
            XCTAssertEqual(refused.status, 2, "\(arguments): \(refused.stderr)")
        }
    }

    /// CastKit's MusicPlayerController with the speaker as its route (the Examples/MusicQueue program): both tones
    /// of the queue reach shairport-sync, in order, at their frequencies and lengths.
    func testMusicPlayerControllerPlaysAQueueOnTheSpeaker() throws {
        let folder = "\(work!)/music"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for (name, frequency) in [("01.wav", 1000), ("02.wav", 500)] {
            let made = try runCommand([
                "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
                "sine=frequency=\(frequency):sample_rate=44100:duration=2",
                "\(folder)/\(name)",
            ])
            XCTAssertEqual(made.status, 0, made.stderr)
        }
        let played = try lab.run(
            on: .phone, [Paths.example("music-queue"), folder, "--to", speakerName],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"], timeout: 40)
        XCTAssertEqual(played.status, 0, "\(played.stderr)\n\(played.stdout)")
        XCTAssertEqual(
            played.stdout.split(separator: "\n").filter { $0.hasPrefix("now playing:") }.map(String.init),
            ["now playing: 01", "now playing: 02"], played.stdout)

        // The capture holds two loud stretches (each track is its own RAOP session, silence between).
        let samples = captured()
        var stretches: [ArraySlice<Int16>] = []
        var start: Int?
        var quiet = 0
        for (index, sample) in samples.enumerated() {
            if abs(Int(sample)) > 2000 {
                if start == nil { start = index }
                quiet = 0
            } else if let begun = start {
                quiet += 1
                if quiet > 4410 {  // 0.1 s of silence ends a stretch
                    stretches.append(samples[begun..<(index - quiet)])
                    start = nil
                }
            }
        }
        if let begun = start { stretches.append(samples[begun...]) }
        let measured = stretches.map { stretch -> (frequency: Double, seconds: Double) in
            var crossings = 0
            for i in stretch.indices.dropFirst() where (stretch[i - 1] < 0) != (stretch[i] < 0) { crossings += 1 }
            let seconds = Double(stretch.count) / 44_100
            return (Double(crossings) / 2 / seconds, seconds)
        }
        print(
            "music player on the speaker: \(measured.map { String(format: "%.1f Hz for %.3f s", $0.frequency, $0.seconds) })"
        )
        XCTAssertEqual(measured.count, 2, "\(measured)")
        guard measured.count == 2 else { return }
        XCTAssertEqual(measured[0].frequency, 1000, accuracy: 10)
        XCTAssertEqual(measured[1].frequency, 500, accuracy: 10)
        for stretch in measured { XCTAssertEqual(stretch.seconds, 2, accuracy: 0.06) }
    }

    func testPauseFlushesTheSpeakerAndStopTearsDown() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") else {
            throw XCTSkip("tmux is not installed (scripts/setup installs it)")
        }
        let clip = try tone("long.wav", frequency: 440, seconds: 30)
        let terminal = try TerminalSession(
            lab: lab, on: .phone,
            command: "\(Paths.cast) send '\(clip)' --to '\(speakerName)'; echo \"exit=$?\"; sleep 30",
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        defer { terminal.close() }
        func waitFor(_ text: String, timeout: Double = 10) -> String? { terminal.waitFor(text, timeout: timeout) }
        func screen() -> String { terminal.screen }
        func tmux(_ arguments: [String]) throws -> CommandResult { try terminal.tmux(arguments) }
        func growth(over seconds: Double) -> Int {
            let before = capturedFrames()
            Thread.sleep(forTimeInterval: seconds)
            return capturedFrames() - before
        }

        XCTAssertNotNil(terminal.waitFor(line: ["▶ playing", "0:02 /"]), screen())
        XCTAssertGreaterThan(growth(over: 1), 30_000, "the speaker plays in real time")

        // Pause: FLUSH drops what the speaker holds; it writes nothing more.
        XCTAssertEqual(try tmux(["send-keys", "Space"]).status, 0)
        XCTAssertNotNil(waitFor("⏸ paused"), screen())
        let afterFlush = growth(over: 1)
        let whilePaused = growth(over: 3)
        print("speaker capture: \(afterFlush) frames in the first second after FLUSH, \(whilePaused) in the 3 s after")
        XCTAssertEqual(whilePaused, 0, "samples were captured while paused")
        XCTAssertLessThan(afterFlush, 44_100 / 2, "more than half a second of audio after FLUSH")

        // Resume: audio flows again.
        XCTAssertEqual(try tmux(["send-keys", "Space"]).status, 0)
        XCTAssertNotNil(waitFor("▶ playing"), screen())
        Thread.sleep(forTimeInterval: 3)
        XCTAssertGreaterThan(growth(over: 1), 30_000, "the speaker plays again after resume")

        // Stop: TEARDOWN; cast exits 0 (stopped by the user) and the speaker writes nothing more.
        XCTAssertEqual(try tmux(["send-keys", "q"]).status, 0)
        let done = try XCTUnwrap(waitFor("exit=", timeout: 10), screen())
        XCTAssertTrue(done.contains("finished: userExited"), done)
        XCTAssertTrue(done.contains("exit=0"), done)
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(growth(over: 2), 0, "samples were captured after TEARDOWN")
        XCTAssertTrue(speaker.isRunning, "shairport-sync outlives the session: \(speaker.output.suffix(10))")
    }

    /// The volume cast sets at the start holds even when the speaker's player starts slowly and applies the volume
    /// it remembered after ours (the first speaker test of a fresh machine heard its tone 40 dB down): cast sets the
    /// volume again once the speaker has started, before the first frame is due.
    func testTheVolumeHoldsOnASpeakerSlowToStart() throws {
        let clip = try tone("slow.wav", seconds: 3)
        let sent = try cast(["send", clip, "--to", speakerName], timeout: 30)
        XCTAssertEqual(sent.status, 0, "\(sent.stderr)\n\(sent.stdout)")
        let samples = captured()
        let peak = samples.map { abs(Int($0)) }.max() ?? 0
        let loud = samples.filter { abs(Int($0)) > 2000 }.count
        print("speaker slow to start: peak \(peak), \(loud) loud samples of \(samples.count)")
        // The mono sine is at 1/8 of full scale (4096), on each stereo channel at -3 dB (2896, as `ffmpeg -ac 2`
        // spreads a centre channel), sent unattenuated: 40 when the speaker's remembered volume wins.
        XCTAssertEqual(Double(peak), 4096 / 2.0.squareRoot(), accuracy: 150, "the tone was attenuated: peak \(peak)")
        XCTAssertGreaterThan(loud, 44_100, "less than a second of the tone at its level")
    }

    func testASpeakerThatGoesAwayEndsTheSendWithConnectionLost() throws {
        let clip = try tone("lost.wav", seconds: 20)
        let sender = try lab.start(
            on: .phone, [Paths.cast, "send", clip, "--to", speakerName, "--json"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        XCTAssertNotNil(sender.waitForLine(containing: #""state":"playing""#, timeout: 10), "\(sender.output)")
        Thread.sleep(forTimeInterval: 1)
        kill(speaker.pid, SIGKILL)
        XCTAssertEqual(sender.waitForExit(timeout: 10), 5, "\(sender.output)")
        XCTAssertTrue(sender.output.contains { $0.contains("speaker") }, "\(sender.output)")
    }

    /// A speaker cannot impersonate a paired receiver (issue #29): the user paired a Cast receiver named like the
    /// speaker; with that receiver away, `cast send --to NAME` must not fall back to the speaker of the same name
    /// (which proves no key and would get the decoded audio), but say that the receiver is not found.
    func testASpeakerInAPairedReceiversNameIsNeverChosen() throws {
        let receiver = try lab.start(
            on: .box,
            [
                Paths.castd, "--name", speakerName, "--port", "7100", "--state-dir", "\(work!)/state", "--video-out",
                "none",
                "--audio-device", "none",
            ])
        XCTAssertNotNil(receiver.waitForLine(containing: "advertised as"), "\(receiver.output)")
        let pair = try lab.start(
            on: .phone, [Paths.cast, "pair", speakerName], environment: ["XDG_CONFIG_HOME": "\(work!)/sender"],
            interactive: true)
        let line = try XCTUnwrap(receiver.waitForLine(containing: "Pairing PIN: ", timeout: 10), "\(receiver.output)")
        pair.type(String(line.split(separator: " ").last ?? ""))
        XCTAssertEqual(pair.waitForExit(timeout: 20), 0, "\(pair.output)")
        receiver.stop()
        // Away: the phone's avahi no longer lists the Cast receiver, only the speaker of its name.
        let deadline = Date().addingTimeInterval(20)
        var seen = ""
        repeat {
            seen = (try? cast(["list", "--json"]).stdout) ?? ""
            if !seen.contains(#""kind":"cast""#) && seen.contains(#""kind":"raop""#) { break }
            Thread.sleep(forTimeInterval: 0.2)
        } while Date() < deadline
        XCTAssertFalse(seen.contains(#""kind":"cast""#), "the Cast receiver is still listed: \(seen)")

        let clip = try tone("impostor.wav", seconds: 3)
        let sent = try cast(["send", clip, "--to", speakerName, "--json"], timeout: 30)
        print("cast send to the paired name with only the speaker in sight: exit \(sent.status): \(sent.stderr)")
        // Not found (3), or its last address refused the connection (5) while avahi still remembered its record.
        XCTAssertTrue([3, 5].contains(sent.status), "exit \(sent.status): \(sent.stderr)\n\(sent.stdout)")
        XCTAssertTrue(sent.stderr.contains(speakerName), sent.stderr)
        XCTAssertFalse(sent.stdout.contains(#""state":"playing""#), sent.stdout)
        XCTAssertEqual(capturedFrames(), 0, "the speaker got audio meant for the paired receiver")
        // The speaker itself is still there for words that do not name the paired receiver (its address).
        let listed = try cast(["list", "--json"])
        XCTAssertTrue(listed.stdout.contains(#""kind":"raop""#), listed.stdout)
    }
}
