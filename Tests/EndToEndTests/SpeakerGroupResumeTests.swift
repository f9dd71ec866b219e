import CastBase
import CastProtocol
import CastTestSupport
import Foundation
import XCTest

/// The rest of groups with an AirPlay speaker (issue 31): a group with a speaker resumes and seeks as fast as one
/// without. Real shairport-sync on the lab's box (`-o stdout` into a FIFO this test reads) beside a castd on a room host
/// in a time namespace of its own (3 s ahead), as SpeakerGroupTests sets them up; what is timed is castd's ALSA output
/// (another FIFO), stamped by this test on arrival.
///
/// shairport-sync writes a frame to a backend without a delay function (stdout) `audio_backend_buffer_desired_length`
/// before it is heard; this test sets it to 0.15 s, shairport-sync's default for its ALSA backend, so that the speaker
/// needs its audio as early as a real one does.
final class SpeakerGroupResumeTests: LabTestCase {
    override class var labPrefix: String { "gqs" }
    override class var labRooms: Int { 1 }

    private let speakerName = "Patio Speaker"
    /// Bytes per second: castd's capture (S16 stereo at 48 kHz), shairport-sync's output (S16 stereo at 44.1 kHz).
    private let castRate = 192_000.0
    private let speakerRate = 176_400.0

    private var castd: Daemon!
    private var castCapture: FIFOCapture!
    private var speaker: Daemon!
    private var speakerCapture: FIFOCapture!

    override func setUpWithError() throws {
        try super.setUpWithError()
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/shairport-sync") else {
            throw XCTSkip("shairport-sync is not installed (scripts/setup installs it)")
        }
        try requireTimeNamespaces()
        castCapture = try FIFOCapture(path: "\(work!)/castd.fifo")
        castd = try lab.start(
            on: .room1,
            [
                "unshare", "--time", "--monotonic", "3", "--kill-child=SIGTERM", Paths.castd, "--name", "Kitchen",
                "--auth", "none", "--port", "0", "--state-dir", "\(work!)/castd-state", "--audio-device",
                "castcapture:FILE=\(castCapture.path),CHANNELS=2", "--video-out", "none",
            ],
            environment: ["ALSA_CONFIG_PATH": Media.alsaConfig])
        _ = try castd.listeningPort()
        XCTAssertNotNil(castd.waitForLine(containing: "advertised as"), "\(castd.output)")

        speakerCapture = try FIFOCapture(path: "\(work!)/speaker.fifo")
        let config = "\(work!)/shairport-sync.conf"
        try """
        general = { name = "\(speakerName)"; port = 5000; audio_backend_buffer_desired_length_in_seconds = 0.15; };

        """.write(toFile: config, atomically: true, encoding: .utf8)
        speaker = try lab.start(
            on: .box,
            ["sh", "-c", "exec shairport-sync -c \"$0\" -u -v -o stdout > \"$1\"", config, speakerCapture.path])
        let deadline = Date().addingTimeInterval(20)
        var seen = ""
        repeat {
            seen = (try? cast(["list", "--json"]).stdout) ?? ""
            if seen.contains(#""kind":"raop""#) && seen.contains("Kitchen") { break }
            Thread.sleep(forTimeInterval: 0.2)
        } while Date() < deadline && speaker.isRunning
        XCTAssertTrue(
            seen.contains(#""kind":"raop""#), "no speaker in cast list: \(seen); shairport: \(speaker.output)")
    }

    private func cast(_ arguments: [String], timeout: Double = 60) throws -> CommandResult {
        try lab.run(
            on: .phone, [Paths.cast] + arguments, environment: ["XDG_CONFIG_HOME": "\(work!)/sender"], timeout: timeout)
    }

    /// The first read of the last stretch `capture` wrote without a pause of 200 ms or more among the reads that
    /// arrived between `from` and `to` (CLOCK_MONOTONIC ns), or the first of them when there is no such pause (it was
    /// paused at `from`): where the group started it again.
    private func lastStretchStart(_ capture: FIFOCapture, from: Int64, to: Int64) -> FIFOCapture.Read? {
        let reads = capture.reads.filter { $0.arrival > from && $0.arrival < to }
        let gap = reads.indices.dropFirst().last { reads[$0].arrival - reads[$0 - 1].arrival > 200_000_000 }
        return gap.map { reads[$0] } ?? reads.first
    }

    /// `cast pause Kitchen`, `cast resume Kitchen`, `cast seek Kitchen 20` on a group of a Cast receiver and an AirPlay
    /// speaker: the receiver's samples come back within a second of each request (0.4 s of it the group's start
    /// margin), as in a group without a speaker, and the speaker plays again too. Before, a group with a speaker put
    /// every resume 2.5 s ahead (the speaker's 2 s latency and its lead), and its Cast members waited as long.
    func testAGroupWithASpeakerResumesAndSeeksAsFastAsOneWithout() throws {
        let clip = "\(work!)/beeps.flac"
        let made = try runCommand(Capture.beepFileCommand(seconds: 30, path: clip))
        XCTAssertEqual(made.status, 0, made.stderr)
        let sender = try lab.start(
            on: .phone, [Paths.cast, "send", clip, "--to", "Kitchen", "--to", speakerName],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        XCTAssertTrue(
            waitUntil(timeout: 30) { (self.castCapture.reads.last?.total ?? 0) >= Int(self.castRate) * 4 },
            "castd did not play: \(sender.output)")
        XCTAssertEqual(try cast(["pause", "Kitchen"]).status, 0)
        Thread.sleep(forTimeInterval: 1.5)
        let paused = (castCapture.reads.last?.total ?? 0, speakerCapture.reads.last?.total ?? 0)

        let resumed = MonotonicClock.nanoseconds()
        XCTAssertEqual(try cast(["resume", "Kitchen"]).status, 0)
        Thread.sleep(forTimeInterval: 5)
        XCTAssertGreaterThan(castCapture.reads.last?.total ?? 0, paused.0 + Int(castRate) * 2, "castd resumed")
        XCTAssertGreaterThan(speakerCapture.reads.last?.total ?? 0, paused.1 + Int(speakerRate), "the speaker resumed")
        let seeked = MonotonicClock.nanoseconds()
        XCTAssertEqual(try cast(["seek", "Kitchen", "20"]).status, 0)
        XCTAssertEqual(sender.waitForExit(timeout: 60), 0, "\(sender.output)")
        _ = castCapture.stop(atLeast: 0)
        _ = speakerCapture.stop(atLeast: 0)

        for (what, from, to) in [("resume", resumed, seeked), ("seek", seeked, Int64.max)] {
            let back = try XCTUnwrap(
                lastStretchStart(castCapture, from: from, to: to), "castd did not start again after the \(what)")
            let delay = Double(back.arrival - from) / 1e9
            print(String(format: "speaker group: cast %@ → castd's samples again in %.0f ms", what, delay * 1000))
            // About 0.5-0.9 s here (the group's start margin, the pause and seek of every member before it); 2.5 s
            // and more when the speaker's latency set the schedule. A generous bound: the machine is shared.
            XCTAssertLessThan(delay, 1.5, "after the \(what)")
        }
        // The speaker played the end of the file after the seek: its bytes from the seek on are the 10 s from 20 s.
        let afterSeek = speakerCapture.reads.filter { $0.arrival > seeked }
        let speakerBytes = (afterSeek.last?.total ?? 0) - (afterSeek.first?.total ?? 0)
        print(
            String(format: "speaker group: the speaker wrote %.2f s after the seek", Double(speakerBytes) / speakerRate)
        )
        XCTAssertGreaterThan(Double(speakerBytes) / speakerRate, 9, "the speaker after the seek")
    }
}
