import CastKit
import CastProtocol
import CastTestSupport
import Foundation
import Glibc
import XCTest

/// What the group tests measure from outside castd: each receiver's ALSA output is a FIFO this process reads, stamping
/// every read with its own CLOCK_MONOTONIC on arrival (the method of EndToEndTests' GroupTests, whose FIFO reader this
/// is: the two test targets share no code).
enum GroupFixtures {
    /// Bytes per second of a capture: S16 stereo at 48 kHz.
    static let rate = 192_000.0

    /// A file of `seconds` whose every second begins with a 10 ms beep at 1 kHz, silence otherwise (FLAC, 48 kHz).
    static func beeps(seconds: Int, in folder: URL) throws -> URL {
        let url = folder.appendingPathComponent("beeps.flac")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = Capture.beepFileCommand(seconds: seconds, path: url.path)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "ffmpeg failed")
        return url
    }

    /// castd named `name` on loopback, its files in a folder of its own under `folder`, its sound written into a FIFO
    /// this process reads (castd finds the capture PCM through the environment it inherits: `MovieFixtures.alsa`).
    static func capturingReceiver(_ name: String, in folder: URL) throws -> (LoopbackReceiver, FIFOCapture) {
        _ = MovieFixtures.alsa
        let directory = folder.appendingPathComponent(name.replacingOccurrences(of: " ", with: "-"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let capture = try FIFOCapture(path: directory.appendingPathComponent("audio.fifo").path)
        do {
            let receiver = try LoopbackReceiver(
                stateDirectory: directory.appendingPathComponent("state").path, name: name,
                audioDevice: "castcapture:FILE=\(capture.path),CHANNELS=2")
            return (receiver, capture)
        } catch {
            capture.stop()
            throw error
        }
    }

    /// How far apart the captures wrote the first beep half a second or more into the last stretch each wrote without
    /// a pause between `from` and `to` (CLOCK_MONOTONIC ns), on this process's clock (s). The beeps are a second
    /// apart: compared within one.
    static func spread(_ captures: [FIFOCapture], between from: Int64, and to: Int64) throws -> Double {
        try Capture.beepSpread(captures.map { ($0.path, $0) }, between: from, and: to, bytesPerSecond: rate)
    }

}

/// A test of CastKit players routed to real castd on loopback (no discovery, `--auth none`), each writing its sound
/// into a FIFO this test reads: the folder, the receivers and their captures, started and cleaned up alike for every
/// such class (GroupRouteTests, RouteMoveTests, GroupURLTests, GroupQueueRouteTests).
class CapturingReceiversTestCase: LoopbackReceiversTestCase {
    var captures: [FIFOCapture] = []

    override func setUpWithError() throws {
        try super.setUpWithError()
        // castd finds the capture PCM through the environment it inherits.
        _ = MovieFixtures.alsa
    }

    override func tearDown() {
        // The receivers first: none writes into a capture once it stops.
        super.tearDown()
        for capture in captures { capture.stop() }
        captures = []
    }

    /// castd named `name` on loopback, its sound written into a FIFO this test reads.
    func startReceiver(_ name: String) throws -> (ReceiverDescription, FIFOCapture) {
        let (receiver, capture) = try GroupFixtures.capturingReceiver(name, in: folder)
        captures.append(capture)
        receivers.append(receiver)
        return (receiver.description, capture)
    }
}
