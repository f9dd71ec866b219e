import CastBase
import CastTestSupport
import Foundation
import XCTest

/// A castd in a room of the lab (`--auth none`, no video) whose sound goes into a FIFO the test reads, each read
/// stamped with its CLOCK_MONOTONIC on arrival (`FIFOCapture`): what it played, and when, measured from outside.
struct CapturingRoom {
    /// The name castd is told (`--name`).
    let name: String
    let daemon: Daemon
    let capture: FIFOCapture
    /// The port castd listens on.
    let port: UInt16
}

extension LabTestCase {
    /// Starts castd named `name` on `host`, its files in `folder` under the work folder; `advertised`: waits until it
    /// is advertised, else starts it with `--no-advertise` (reachable by its address only). With `shift`, castd runs
    /// in a time namespace of its own, its CLOCK_MONOTONIC that many seconds ahead (as a group member's box would be),
    /// and with `skew` its clock runs that many ppm fast (`CAST_TEST_CLOCK_SKEW_PPM`, test only).
    func startCapturingRoom(
        _ name: String, on host: Lab.Host, folder: String, advertised: Bool = true, shift: Int? = nil, skew: Int = 0
    ) throws -> CapturingRoom {
        let folder = "\(work!)/\(folder)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let capture = try FIFOCapture(path: "\(folder)/audio.fifo")
        let daemon = try lab.start(
            on: host,
            (shift.map { ["unshare", "--time", "--monotonic", "\($0)", "--kill-child=SIGTERM"] } ?? []) + [
                Paths.castd, "--name", name, "--auth", "none", "--port", "0", "--state-dir", "\(folder)/state",
                "--audio-device", "castcapture:FILE=\(capture.path),CHANNELS=2", "--events", "\(folder)/events.jsonl",
                "--video-out", "none",
            ] + (advertised ? [] : ["--no-advertise"]),
            environment: ["ALSA_CONFIG_PATH": Media.alsaConfig].merging(
                skew == 0 ? [:] : ["CAST_TEST_CLOCK_SKEW_PPM": "\(skew)"]
            ) { $1 })
        let port = try daemon.listeningPort()
        if advertised { XCTAssertNotNil(daemon.waitForLine(containing: "advertised as"), "\(daemon.output)") }
        return CapturingRoom(name: name, daemon: daemon, capture: capture, port: port)
    }
}

extension LabTestCase {
    /// `clip` played on the kitchen alone (`cast send CLIP --to Kitchen` on the phone) until 3 s of it came out of its
    /// capture, then `cast move Kitchen --to "Living Room" --keep` and the sender's word that the two play as a group:
    /// where MoveAloneTests and AdoptTests begin. The sender (still playing), and when the move was asked
    /// (CLOCK_MONOTONIC seconds).
    func playOnKitchenThenKeepItWithTheLivingRoom(_ kitchen: CapturingRoom, clip: String) throws -> (
        sender: Daemon, asked: Double
    ) {
        let sender = try lab.start(
            on: .phone, [Paths.cast, "send", clip, "--to", "Kitchen"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        // S16 stereo at 48 kHz: 192 000 bytes a second.
        XCTAssertTrue(waitUntil(timeout: 30) { Double(kitchen.capture.total) >= 3 * 192_000 }, "\(sender.output)")
        let asked = Double(MonotonicClock.nanoseconds()) / 1e9
        let kept = try castOnPhone(["move", "Kitchen", "--to", "Living Room", "--keep"])
        XCTAssertEqual(kept.status, 0, kept.stderr)
        XCTAssertEqual(kept.stdout, "Living Room plays in the group of Kitchen\n")
        XCTAssertNotNil(
            sender.waitForLine(containing: "cast: Living Room joins: Kitchen and Living Room play as a group from"),
            "\(sender.output)")
        return (sender, asked)
    }
}
