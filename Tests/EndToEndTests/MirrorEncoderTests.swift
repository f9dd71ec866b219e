import CastTestSupport
import Foundation
import XCTest

/// `cast mirror --encoder auto|software|vaapi` in the lab with the real programs, on this machine, which has no GPU
/// (no /dev/dri): vaapi is refused with the reason before any receiver is reached (exit 2), auto mirrors with libx264
/// and says why on standard error and in `--json`, software says nothing, and a bad value is a usage error. The
/// sender's screen is one Xvfb; castd shows its picture full screen on an Xvfb of its own, read back with x11grab.
final class MirrorEncoderTests: ScreenLabTestCase {
    override class var labPrefix: String { "e2va" }

    /// The sender's screen painted green (ffplay's lavfi `color`, full screen) until the lab stops it.
    private func paintGreen(on screen: VirtualDisplay) throws {
        _ = try lab.start(
            on: .phone,
            [
                "ffplay", "-v", "error", "-an", "-noborder", "-left", "0", "-top", "0", "-x", "1280", "-y", "720", "-f",
                "lavfi", "-i", "color=green:size=1280x720:rate=10",
            ],
            environment: ["DISPLAY": screen.display])
    }

    /// A receiver and a green sender screen; the environment that mirrors it.
    private func startLab() throws -> (receiver: Daemon, receiverScreen: VirtualDisplay, sender: [String: String]) {
        guard VAAPIFree.holds else { throw XCTSkip("this machine has a /dev/dri render node: the refusal cannot show") }
        let receiverScreen = try startDisplay()
        let senderScreen = try startDisplay()
        let receiver = try startFullscreenReceiver(screen: receiverScreen)
        try paintGreen(on: senderScreen)
        return (receiver, receiverScreen, ["XDG_CONFIG_HOME": "\(work!)/sender", "DISPLAY": senderScreen.display])
    }

    /// `--encoder vaapi` where there is no VA-API device, or one that does not open, exits 2 with the reason and
    /// reaches no receiver; a bad `--encoder` or a `--vaapi-device` with software is a usage error.
    func testVAAPIIsRefusedWithTheReasonAndNothingReachesTheReceiver() throws {
        let (receiver, _, sender) = try startLab()
        let refusals: [([String], String)] = [
            (["--encoder", "vaapi"], "--encoder vaapi: no VA-API device: /dev/dri has no render node"),
            (
                ["--encoder", "vaapi", "--vaapi-device", "/dev/null"],
                "--encoder vaapi: VA-API device /dev/null did not open: "
            ),
            (
                ["--encoder", "vaapi", "--vaapi-device", "/dev/dri/renderD128"],
                "--encoder vaapi: no VA-API device: /dev/dri/renderD128 does not exist"
            ),
            (["--encoder", "gpu"], "--encoder takes auto, software or vaapi"),
            (
                ["--encoder", "software", "--vaapi-device", "/dev/null"],
                "--vaapi-device goes with --encoder auto or vaapi"
            ),
            (["--vaapi-device", "renderD128"], "--vaapi-device takes a render node's path"),
        ]
        for (options, words) in refusals {
            let result = try lab.run(
                on: .phone, [Paths.cast, "mirror", "--to", "Living Room"] + options, environment: sender, timeout: 30)
            XCTAssertEqual(result.status, 2, "\(options): \(result.stdout)\n\(result.stderr)")
            XCTAssertTrue(result.stderr.contains(words), "\(options): \(result.stderr)")
            XCTAssertEqual(result.stdout, "", "\(options)")
        }
        XCTAssertFalse(
            receiver.output.contains { $0.contains("connected from") }, "no sender reached castd: \(receiver.output)")
    }

    /// `cast mirror` run for `seconds` and then interrupted (Ctrl-C: it stops the receiver and exits 0), its standard
    /// output and error apart; castd's screen is read meanwhile until green covers it (nil: it never did).
    private func mirror(
        _ options: [String], sender: [String: String], receiverScreen: VirtualDisplay, seconds: Int = 12
    ) throws -> (result: CommandResult, green: Double?) {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var outcome: Result<CommandResult, any Error>?
        // As `lab.run` on the phone, from another thread (the lab is not Sendable; its words are).
        let command =
            [
                Paths.lab, "exec", lab.name, Lab.Host.phone.rawValue, "timeout", "--preserve-status", "-s", "INT",
                "\(seconds)", Paths.cast,
            ]
            + ["mirror", "--to", "Living Room", "--json"] + options
        DispatchQueue.global().async {
            outcome = Result { try runCommand(command, environment: sender, timeout: Double(seconds) + 30) }
            done.signal()
        }
        let screen = try capture(receiverScreen, timeout: Double(seconds)) {
            $0.fraction(of: .green, x: 0..<1280, y: 0..<720) > 0.9
        }
        let green = screen.fraction(of: .green, x: 0..<1280, y: 0..<720)
        done.wait()
        return (try outcome!.get(), green > 0.9 ? green : nil)
    }

    /// auto on a machine without VA-API mirrors as before with libx264, and says why: a note on standard error and
    /// `"encoder":"libx264"` with an `"encoderNote"` in each `--json` mirror event; software says nothing.
    func testAutoFallsBackToLibx264WithANoteAndSoftwareSaysNothing() throws {
        let (receiver, receiverScreen, sender) = try startLab()
        let auto = try mirror([], sender: sender, receiverScreen: receiverScreen)
        XCTAssertEqual(auto.result.status, 0, "\(auto.result.stdout)\n\(auto.result.stderr)")
        XCTAssertNotNil(auto.green, "the screen was mirrored: \(auto.result.stdout)")
        let note = "VA-API is not used (no VA-API device: /dev/dri has no render node): encoding with libx264"
        XCTAssertEqual(
            auto.result.stderr.split(separator: "\n").filter { $0.contains("note:") }, ["cast: note: \(note)"],
            auto.result.stderr)
        let events = auto.result.stdout.split(separator: "\n").filter { $0.contains(#""event":"mirror""#) }
        XCTAssertFalse(events.isEmpty, auto.result.stdout)
        for event in events {
            XCTAssertTrue(event.contains(#""encoder":"libx264","encoderNote":"\#(note)"}"#), String(event))
        }
        XCTAssertTrue(receiver.output.contains { $0.contains("connected from") }, "\(receiver.output)")

        let software = try mirror(["--encoder", "software"], sender: sender, receiverScreen: receiverScreen)
        XCTAssertEqual(software.result.status, 0, "\(software.result.stdout)\n\(software.result.stderr)")
        XCTAssertNotNil(software.green, "the screen was mirrored: \(software.result.stdout)")
        XCTAssertFalse(software.result.stderr.contains("note:"), software.result.stderr)
        let softwareEvents = software.result.stdout.split(separator: "\n").filter {
            $0.contains(#""event":"mirror""#)
        }
        XCTAssertFalse(softwareEvents.isEmpty, software.result.stdout)
        for event in softwareEvents {
            XCTAssertTrue(event.hasSuffix(#""encoder":"libx264"}"#), String(event))
        }
    }
}

/// Whether this machine has no VA-API render node (the lab's case: no GPU), which the words above assume.
private enum VAAPIFree {
    static var holds: Bool {
        let nodes = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/dri")) ?? []
        return !nodes.contains { $0.hasPrefix("renderD") }
    }
}
