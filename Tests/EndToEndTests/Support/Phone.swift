import CastTestSupport
import Foundation
import XCTest

/// What a test does on the phone, the sender's host of the lab: `cast` as the sender whose settings are in
/// `work`/sender, the beep files it sends, and the relays that put a jittery path between it and a receiver.
extension LabTestCase {
    /// `cast ARGUMENTS` on the phone, as the sender whose settings are in `work`/sender; returns once it exits (at
    /// most `timeout` s).
    func castOnPhone(_ arguments: [String], timeout: Double = 60) throws -> CommandResult {
        try lab.run(
            on: .phone, [Paths.cast] + arguments, environment: ["XDG_CONFIG_HOME": "\(work!)/sender"], timeout: timeout)
    }

    /// A file `name` in the work folder of `seconds` whose every second begins with a 10 ms beep at 1 kHz, silence
    /// otherwise (FLAC, 48 kHz); a failure of ffmpeg is reported at the caller's line.
    func beeps(seconds: Int, name: String = "beeps.flac", file: StaticString = #filePath, line: UInt = #line) throws
        -> String
    {
        let clip = "\(work!)/\(name)"
        let made = try runCommand(Capture.beepFileCommand(seconds: seconds, path: clip))
        XCTAssertEqual(made.status, 0, made.stderr, file: file, line: line)
        return clip
    }

    /// `scripts/jitter-relay` on the phone in front of `target` (ADDRESS:PORT), holding every chunk of each direction
    /// for a random 1 to 8 ms (its draws seeded with `seed`); the address to send to instead (127.0.0.1:PORT).
    func startJitterRelay(to target: String, seed: Int) throws -> String {
        let relay = try lab.start(
            on: .phone,
            [
                "python3", Paths.jitterRelay, "--listen", "127.0.0.1:0", "--to", target, "--up", "1-8", "--down", "1-8",
                "--seed", "\(seed)",
            ])
        let line = try XCTUnwrap(relay.waitForLine(containing: "listening on port", timeout: 20), "\(relay.output)")
        let port = try XCTUnwrap(line.split(separator: " ").drop { $0 != "port" }.dropFirst().first, line)
        return "127.0.0.1:\(port)"
    }
}
