import CastTestSupport
import Foundation
import XCTest

/// A group of a Cast receiver and an AirPlay (RAOP) speaker in the lab, as SpeakerGroupTests and GroupSpeakerTests
/// set it up: castd "Kitchen" on a room host in a time namespace of its own (3 s ahead), its ALSA output a FIFO this
/// test reads (`castCapture`), and real shairport-sync on the box (`startSpeaker`), its `-o stdout` another FIFO
/// (`speakerCapture`); each read stamped on arrival. SpeakerGroupTests says what each write means and how the two are
/// placed against each other.
///
/// Not thread-safe: each test's own thread sets it up and reads it.
class SpeakerGroupTestCase: LabTestCase {
    override class var labRooms: Int { 1 }

    let speakerName = "Patio Speaker"
    /// Bytes per second: castd's capture (S16 stereo at 48 kHz), shairport-sync's output (S16 stereo at 44.1 kHz).
    let castRate = 192_000.0
    let speakerRate = 176_400.0
    /// shairport-sync's `audio_backend_buffer_desired_length_in_seconds`, set in its configuration (`startSpeaker`):
    /// how long before a frame is heard it is written to a backend without a delay function (stdout).
    private(set) var speakerBuffer = 1.0
    /// shairport-sync releases a packet (352 frames) when its first frame is due, so the bytes a read ends with run one
    /// packet ahead of the time: a write placed by `least(arrival − bytes / rate)` is that much early (s).
    let speakerPacket = 352 / 44_100.0

    private(set) var castd: Daemon!
    private(set) var castCapture: FIFOCapture!
    private(set) var speaker: Daemon!
    private(set) var speakerCapture: FIFOCapture!
    /// How many times this test started shairport-sync (each start writes into a FIFO of its own).
    private var speakerStarts = 0

    /// castd's event file (its `scheduledStart` events, in its clock 3 s ahead).
    var castdEvents: String { "\(work!)/castd/events.jsonl" }

    override func setUpWithError() throws {
        try super.setUpWithError()
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/shairport-sync") else {
            throw XCTSkip("shairport-sync is not installed (scripts/setup installs it)")
        }
        try requireTimeNamespaces()
        let kitchen = try startCapturingRoom("Kitchen", on: .room1, folder: "castd", shift: 3)
        (castd, castCapture) = (kitchen.daemon, kitchen.capture)
    }

    /// shairport-sync on the lab's box, writing into a FIFO this test reads `buffer` seconds before each frame is
    /// heard; returns once `cast list` on the phone sees it and the kitchen.
    func startSpeaker(buffer: Double) throws {
        speakerBuffer = buffer
        speakerStarts += 1
        speakerCapture = try FIFOCapture(path: "\(work!)/speaker-\(speakerStarts).fifo")
        let config = "\(work!)/shairport-sync.conf"
        try """
        general = { name = "\(speakerName)"; port = 5000; audio_backend_buffer_desired_length_in_seconds = \(speakerBuffer); };

        """.write(toFile: config, atomically: true, encoding: .utf8)
        speaker = try lab.start(
            on: .box,
            ["sh", "-c", "exec shairport-sync -c \"$0\" -u -v -o stdout > \"$1\"", config, speakerCapture.path])
        let deadline = Date().addingTimeInterval(20)
        var seen = ""
        repeat {
            seen = (try? castOnPhone(["list", "--json"]).stdout) ?? ""
            if seen.contains(#""kind":"raop""#) && seen.contains("Kitchen") { break }
            Thread.sleep(forTimeInterval: 0.2)
        } while Date() < deadline && speaker.isRunning
        XCTAssertTrue(
            seen.contains(#""kind":"raop""#), "no speaker in cast list: \(seen); shairport: \(speaker.output)")
    }

    /// `cast send clip --to Kitchen --to "Patio Speaker"` (and `extra`) started on the phone, stopped with the lab.
    func sendToKitchenAndSpeaker(_ clip: String, _ extra: [String] = []) throws -> Daemon {
        try lab.start(
            on: .phone, [Paths.cast, "send", clip, "--to", "Kitchen", "--to", speakerName] + extra,
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
    }

    /// When each beep of a capture was written, on this test's clock (s): placed by the reads that carry it and the
    /// 0.3 s after it (`least(arrival − bytes / rate) + onset / rate`: steady writes only, never a burst of lead-in
    /// silence); only reads that arrived between `from` and `to` (CLOCK_MONOTONIC ns) count.
    func beepWrites(_ capture: FIFOCapture, bytesPerSecond rate: Double, from: Int64 = 0, to: Int64 = .max)
        -> [Double]
    {
        let bytes = capture.bytes
        let reads = capture.reads.filter { $0.arrival > from && $0.arrival < to }
        guard let first = reads.first?.total else { return [] }
        var times: [Double] = []
        var at = first
        while let onset = Capture.beepOnset(in: bytes, from: at) {
            at = onset + Int(rate) / 2
            let near = reads.filter { $0.total > onset && $0.total < onset + Int(rate * 0.3) }
            guard near.count >= 5 else { continue }
            let start = near.map { Double($0.arrival) / 1e9 - Double($0.total) / rate }.min()!
            times.append(start + Double(onset) / rate)
        }
        return times
    }
}
