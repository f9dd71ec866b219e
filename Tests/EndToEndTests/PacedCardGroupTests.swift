import CastProtocol
import CastTestSupport
import Foundation
import XCTest

/// A group whose members' sound cards pace themselves (docs/multiroom.md, "A sound card that paces itself"): each castd
/// is told `--audio-clock device`, and its ALSA file PCM writes into a FIFO that this test drains at the pace of a card
/// of its own (`PacedCapture`: a pipe page at each deadline of 48 kHz × (1 + ppm·10⁻⁶) on this test's clock), so that
/// castd's writes block on the card and the card, not castd, sets the pace, as on real hardware. Each sample's play
/// time is the card's: when it was started plus its index over the card's rate. The members run in time namespaces of
/// their own with box clocks 100 ppm fast and slow (`CAST_TEST_CLOCK_SKEW_PPM`), their cards 150 ppm fast and slow
/// against this test's clock: left alone the two cards drift 0.3 ms a second apart (18 ms over a minute); castd
/// resamples each one onto the group's timeline (`DriftCompensation`).
///
/// `CAST_TEST_DRIFT_COMPENSATION=off` (test only) makes castd measure and report the drift but not correct it: the test
/// then fails, and prints how far the cards drifted.
final class PacedCardGroupTests: LabTestCase {
    override class var labPrefix: String { "pcd" }
    override class var labRooms: Int { 2 }

    /// castd plays 8 channels, which ALSA's plug widens to 16 of S32 for the card: a pipe page is 64 frames (1.3 ms),
    /// the grain at which castd learns where the card is.
    private let channels = 8

    private struct Member {
        let name: String
        let daemon: Daemon
        let card: PacedCapture
    }

    /// castd named `name` on `host`, its clock `shift` s ahead and `skew` ppm fast, playing on a card `ppm` fast.
    private func startMember(_ name: String, on host: Lab.Host, shift: Int, skew: Int, ppm: Double) throws -> Member {
        let folder = "\(work!)/\(shift)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let card = try PacedCapture(
            path: "\(folder)/card.fifo", ppm: ppm, channels: 16, sampleBytes: 4, pages: 128)
        var environment = [
            "ALSA_CONFIG_PATH": Media.alsaConfig, "CAST_TEST_CLOCK_SKEW_PPM": "\(skew)", "CAST_TEST_DRIFT_LOG": "1",
        ]
        if let off = ProcessInfo.processInfo.environment["CAST_TEST_DRIFT_COMPENSATION"] {
            environment["CAST_TEST_DRIFT_COMPENSATION"] = off
        }
        let daemon = try lab.start(
            on: host,
            [
                "unshare", "--time", "--monotonic", "\(shift)", "--kill-child=SIGTERM", Paths.castd, "--name", name,
                "--auth", "none", "--port", "0", "--state-dir", "\(folder)/state", "--video-out", "none",
                "--audio-device", "castcapture:FILE=\(card.path),CHANNELS=16,FORMAT=S32_LE", "--audio-channels",
                "\(channels)", "--audio-clock", "device",
            ],
            environment: environment)
        _ = try daemon.listeningPort()
        XCTAssertNotNil(daemon.waitForLine(containing: "advertised as"), "\(daemon.output)")
        return Member(name: name, daemon: daemon, card: card)
    }

    /// When each beep was heard on `card` (s, this test's clock).
    private func beepTimes(_ card: PacedCapture) -> [Double] {
        let samples = card.samples
        var times: [Double] = []
        var from = 0
        while let onset = Capture.beepOnset(in: samples, from: from, channels: 1) {
            from = onset + Int(card.rate)
            if let time = card.playTime(ofFrame: onset / 2) { times.append(time) }
        }
        return times
    }

    /// Two cards 300 ppm apart play a minute of beeps in step: within a millisecond once the group has learnt their
    /// rates (asserted: 3 ms), where uncorrected they drift 18 ms apart.
    func testSoundCardsThatPaceThemselvesStayInStepByResampling() throws {
        try requireTimeNamespaces()
        let length = min(max(Int(ProcessInfo.processInfo.environment["CAST_GROUP_SECONDS"] ?? "") ?? 60, 30), 3600)
        let members = [
            try startMember("Kitchen", on: .room1, shift: 3, skew: 100, ppm: 150),
            try startMember("Living Room", on: .room2, shift: 7, skew: -100, ppm: -150),
        ]
        let clip = try self.beeps(seconds: length)
        let sender = try lab.start(
            on: .phone, [Paths.cast, "send", clip] + members.flatMap { ["--to", $0.name] },
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        // Each member says how it keeps its card in step (`cast status`): its correction against its card.
        let playing = Date(timeIntervalSinceNow: 40)
        while members[0].card.frames < Int(members[0].card.rate) * 20 && Date() < playing {
            Thread.sleep(forTimeInterval: 0.1)
        }
        for member in members {
            let sync = try memberStatus(member.name).sync
            print("card member \(member.name) at 20 s: \(sync)")
            // The correction undoes the card's drift against the group, about −150 ppm for the fast card, +150 for the
            // slow one, plus the loop's own movement: printed, not asserted (the beeps are the measure).
            XCTAssertNotNil(sync["trimPPM"], member.name)
        }
        XCTAssertEqual(sender.waitForExit(timeout: Double(length) + 60), 0, "\(sender.output)")
        var times: [[Double]] = []
        for member in members {
            member.card.stop(atLeast: Int(member.card.rate) * length)
            let underruns = member.card.underruns
            print(
                "card member \(member.name): \(member.card.frames) frames played, \(underruns.count) underruns while playing"
                    + " (\(member.card.allUnderruns.count) with the end's)")
            XCTAssertEqual(
                underruns.count, 0, "\(member.name): the card ran dry while castd played, at \(underruns.prefix(10))")
            times.append(beepTimes(member.card))
        }
        // What castd measured (CAST_TEST_DRIFT_LOG): its card's error against its clock, the correction.
        for member in members {
            let drift = member.daemon.output.filter { $0.contains("castd: drift ") }
            print("card member \(member.name), castd's last measures:\n" + drift.suffix(3).joined(separator: "\n"))
        }
        XCTAssertEqual(times.map(\.count), [length, length], "beeps found on each card")
        let beeps = times.map(\.count).min() ?? 0
        let apart = (0..<beeps).map { times[0][$0] - times[1][$0] }
        print(
            "cards 300 ppm apart, Kitchen − Living Room at each beep (ms): "
                + apart.map { String(format: "%.3f", $0 * 1000) }.joined(separator: " "))
        // The first seconds are the cards' rates being learnt; from 20 s on, in step.
        let settled = apart.dropFirst(20).map(abs).sorted()
        guard !settled.isEmpty else { return XCTFail("no beeps past 20 s") }
        let p50 = settled[settled.count / 2]
        let worst = settled.last ?? 0
        let spread = (apart.dropFirst(20).max() ?? 0) - (apart.dropFirst(20).min() ?? 0)
        print(
            String(
                format:
                    "cards 300 ppm apart, %d s: first beep %.3f ms apart, last %.3f ms; from 20 s on p50 %.3f ms, worst %.3f ms, range %.3f ms",
                length, (apart.first ?? 0) * 1000, (apart.last ?? 0) * 1000, p50 * 1000, worst * 1000, spread * 1000))
        XCTAssertLessThan(worst, 0.003, "\(apart.map { ($0 * 1e6).rounded() / 1000 }) ms")
    }
}
