import CastProtocol
import CastTestSupport
import Foundation
import XCTest

/// `cast mirror` in the lab with the real programs: the phone's screen is one Xvfb, castd's full-screen window is on
/// another; a picture put on the phone's screen (by ffplay) is read back from castd's screen (x11grab) and compared.
final class MirrorTests: SenderAndReceiverScreensTestCase {
    override class var labPrefix: String { "e2mi" }

    private enum Fixtures {
        /// Four coloured quarters under a grid of thin lines: flat areas and sharp edges.
        static let quarters =
            "color=red:size=1280x720:rate=10,drawbox=x=640:y=0:w=640:h=360:color=blue:t=fill,"
            + "drawbox=x=0:y=360:w=640:h=360:color=green:t=fill,drawbox=x=640:y=360:w=640:h=360:color=white:t=fill,"
            + "drawgrid=w=80:h=80:t=2:color=black"
        /// The same, its quarters turned (blue where red was).
        static let turned =
            "color=blue:size=1280x720:rate=10,drawbox=x=640:y=0:w=640:h=360:color=red:t=fill,"
            + "drawbox=x=0:y=360:w=640:h=360:color=white:t=fill,drawbox=x=640:y=360:w=640:h=360:color=green:t=fill,"
            + "drawgrid=w=80:h=80:t=2:color=black"
        /// A cellular automaton's black and white blocks (4 pixels square), painted once: the screen then stays
        /// still, and its detail takes many times what one picture may carry on a slow link.
        static let stillPattern =
            "cellauto=rule=30:size=320x180:rate=10:full=1:seed=7,scale=1280x720:flags=neighbor,trim=end_frame=1"
        /// ffmpeg's moving test pattern under moving noise: every picture changes, far more than 4 Mbit/s carries.
        static let moving = "testsrc2=size=1280x720:rate=30,noise=alls=12:allf=t"
        /// The quarters, painted once.
        static let stillQuarters = quarters + ",trim=end_frame=1"
    }

    private var sender: [String: String] {
        ["XDG_CONFIG_HOME": "\(work!)/sender", "DISPLAY": senderScreen!.display]
    }

    private func startReceiver(auth: String = "none") throws -> Daemon {
        let receiver = try lab.start(
            on: .box,
            [
                Paths.castd, "--name", "Living Room", "--port", "0", "--state-dir", "\(work!)/state", "--video-out",
                "fullscreen", "--audio-device", "none", "--auth", auth,
            ],
            environment: ["DISPLAY": receiverScreen!.display])
        XCTAssertNotNil(receiver.waitForLine(containing: "advertised as"), "\(receiver.output)")
        return receiver
    }

    /// Shows the lavfi picture `graph` full screen on the sender's display (ffplay, stopped with the lab).
    private func paint(_ graph: String) throws -> Daemon {
        let painter = try lab.start(
            on: .phone,
            [
                "ffplay", "-v", "error", "-an", "-noborder", "-left", "0", "-top", "0", "-x", "1280", "-y", "720", "-f",
                "lavfi", "-i", graph,
            ],
            environment: ["DISPLAY": senderScreen!.display])
        return painter
    }

    /// The sender's screen once ffplay's picture is whole and stays: each quarter's centre of the colour given (top
    /// left, top right, bottom left, bottom right) and nothing changed since the capture before. ffplay's window is
    /// black before its first picture; a reference captured at a moment like that never matches castd's screen.
    private func settled(_ display: VirtualDisplay, quarters colours: [Screenshot.Colour]) throws -> Screenshot {
        let centres = [(300, 170), (940, 170), (300, 540), (940, 540)]
        var before = try display.capture()
        return try capture(display, timeout: 20) { now in
            defer { before = now }
            return zip(colours, centres).allSatisfy { $0.matches(now.pixel($1.0, $1.1)) } && psnr(now, before) > 40
        }
    }

    /// The peak signal-to-noise ratio of `a` against `b` over every pixel's R, G and B, in dB.
    private func psnr(_ a: Screenshot, _ b: Screenshot) -> Double {
        var sum = 0
        a.bytes.withUnsafeBufferPointer { a in
            b.bytes.withUnsafeBufferPointer { b in
                for index in 0..<min(a.count, b.count) {
                    let d = Int(a[index]) - Int(b[index])
                    sum += d * d
                }
            }
        }
        let mse = Double(sum) / Double(a.bytes.count)
        return mse == 0 ? 99 : 10 * log10(255 * 255 / mse)
    }

    func testTheSendersScreenAppearsChangesAndGivesWayToTheIdleScreen() throws {
        let receiverScreen = try XCTUnwrap(receiverScreen)
        let senderScreen = try XCTUnwrap(senderScreen)
        let receiver = try startReceiver()
        var painter = try paint(Fixtures.quarters)
        let source = try settled(senderScreen, quarters: [.red, .blue, .green, .white])
        XCTAssertTrue(Screenshot.Colour.red.matches(source.pixel(100, 100)), "ffplay painted the sender's screen")

        let mirror = try lab.start(
            on: .phone, [Paths.cast, "mirror", "--to", "Living Room", "--json"], environment: sender)
        XCTAssertNotNil(mirror.waitForLine(containing: #""state":"playing""#, timeout: 20), "\(mirror.output)")
        var shown = try capture(receiverScreen) { psnr($0, source) > 30 }
        let first = psnr(shown, source)
        print("mirrored picture: PSNR \(String(format: "%.1f", first)) dB against the sender's screen")
        XCTAssertGreaterThan(first, 30, "castd's screen shows the sender's picture")
        XCTAssertTrue(Screenshot.Colour.red.matches(shown.pixel(300, 170)), "\(shown.pixel(300, 170))")
        XCTAssertTrue(Screenshot.Colour.blue.matches(shown.pixel(940, 170)), "\(shown.pixel(940, 170))")

        // A change on the sender's screen appears.
        painter.stop()
        painter = try paint(Fixtures.turned)
        let changed = try settled(senderScreen, quarters: [.blue, .red, .white, .green])
        shown = try capture(receiverScreen) { psnr($0, changed) > 30 }
        let second = psnr(shown, changed)
        print("after the change: PSNR \(String(format: "%.1f", second)) dB against the sender's screen")
        XCTAssertGreaterThan(second, 30, "castd's screen follows the sender's")
        XCTAssertTrue(Screenshot.Colour.blue.matches(shown.pixel(300, 170)), "\(shown.pixel(300, 170))")
        let figures = mirror.output.last { $0.contains(#""event":"mirror""#) }
        print("cast mirror's last figures: \(figures ?? "none")")
        XCTAssertNotNil(figures, "cast mirror reports its figures: \(mirror.output)")
        XCTAssertTrue(figures?.contains(#""width":1280,"height":720"#) == true, figures ?? "")

        // Stopped from another sender's `cast stop`: castd's idle screen is back.
        let stop = try lab.run(on: .phone, [Paths.cast, "stop", "Living Room"], environment: sender)
        XCTAssertEqual(stop.status, 0, stop.stderr)
        XCTAssertEqual(
            mirror.waitForExit(timeout: 20), 0,
            "cast mirror: \(mirror.output.suffix(8))\ncastd: \(receiver.output.suffix(12))")
        let started = Date()
        let idle = try capture(receiverScreen, timeout: 10) {
            $0.fraction(of: .blue, x: 0..<640, y: 0..<360) < 0.05
                && $0.fraction(of: .red, x: 640..<1280, y: 0..<360) < 0.05
        }
        print("idle screen back \(String(format: "%.2f", Date().timeIntervalSince(started))) s after cast mirror ended")
        XCTAssertLessThan(idle.fraction(of: .blue, x: 0..<640, y: 0..<360), 0.05, "the mirrored picture is gone")
        XCTAssertNotNil(
            receiver.waitForLine(containing: "finished", timeout: 10), "castd reports the end: \(receiver.output)")
        painter.stop()
    }

    /// Issue 32's settling: after a change the sender goes on sending the unchanged screen until the receiver's picture
    /// is sharp. Before, only the change's first second went out at the full rate (then a picture a second): on a
    /// slow link, where a detailed change takes several pictures to sharpen, castd's screen stayed blurred.
    func testAChangeOnAStillScreenSharpensOnASlowLink() throws {
        let receiverScreen = try XCTUnwrap(receiverScreen)
        let senderScreen = try XCTUnwrap(senderScreen)
        _ = try startReceiver()
        try lab.shape(.phone, rate: "200kbit")
        var painter = try paint(Fixtures.stillQuarters)
        _ = try capture(senderScreen, timeout: 20) { Screenshot.Colour.red.matches($0.pixel(100, 100)) }
        let mirror = try lab.start(
            on: .phone, [Paths.cast, "mirror", "--to", "Living Room", "--json"], environment: sender)
        XCTAssertNotNil(mirror.waitForLine(containing: #""state":"playing""#, timeout: 20), "\(mirror.output)")

        painter.stop()
        painter = try paint(Fixtures.stillPattern)
        // The pattern is on the sender's screen when black and white blocks fill it and it stays as it is (ffplay's
        // window is black before its picture).
        var before = try senderScreen.capture()
        let still = try capture(senderScreen, timeout: 20) { now in
            defer { before = now }
            let all = (x: 0..<1280, y: 0..<720)
            return now.fraction(of: .white, x: all.x, y: all.y) > 0.25
                && now.fraction(of: .black, x: all.x, y: all.y) > 0.25 && psnr(now, before) > 40
        }
        let started = Date()
        // A bound five times the 2 s it takes on a loaded machine (before the settling: 6 to 28 s).
        let shown = try capture(receiverScreen, timeout: 10) { psnr($0, still) > 30 }
        let quality = psnr(shown, still)
        print(
            "the still pattern over 200 kbit/s: PSNR \(String(format: "%.1f", quality)) dB after "
                + "\(String(format: "%.1f", Date().timeIntervalSince(started))) s")
        if quality <= 30 {
            _ = try? receiverScreen.capture(save: "\(work!)/castd-screen.png")
            _ = try? senderScreen.capture(save: "\(work!)/sender-screen.png")
        }
        XCTAssertGreaterThan(quality, 30, "castd's picture sharpens (screens in \(work!)): \(mirror.output.suffix(4))")
        painter.stop()
    }

    /// Sender loss (issue 32): `cast mirror` killed without a goodbye (SIGKILL; its helper dies with it), castd's idle
    /// screen is back and castd finishes the session as an error (which connection it finds gone first, the control or
    /// the media one, decides its words). Goal: within 2 s.
    func testTheIdleScreenIsBackWhenTheSenderIsLost() throws {
        let receiverScreen = try XCTUnwrap(receiverScreen)
        let senderScreen = try XCTUnwrap(senderScreen)
        let receiver = try startReceiver()
        let painter = try paint(Fixtures.quarters)
        _ = try capture(senderScreen, timeout: 20) { Screenshot.Colour.red.matches($0.pixel(100, 100)) }
        let mirror = try lab.start(
            on: .phone, [Paths.cast, "mirror", "--to", "Living Room", "--json"], environment: sender)
        XCTAssertNotNil(mirror.waitForLine(containing: #""state":"playing""#, timeout: 20), "\(mirror.output)")
        let shown = try capture(receiverScreen) { $0.fraction(of: .blue, x: 640..<1280, y: 0..<360) > 0.8 }
        XCTAssertGreaterThan(
            shown.fraction(of: .blue, x: 640..<1280, y: 0..<360), 0.8, "the mirrored quarters (grid lines aside)")

        XCTAssertEqual(kill(mirror.pid, SIGKILL), 0)
        let lost = Date()
        let idle = try capture(receiverScreen, timeout: 20) {
            $0.fraction(of: .blue, x: 640..<1280, y: 0..<360) < 0.05
                && $0.fraction(of: .red, x: 0..<640, y: 0..<360) < 0.05
        }
        print(
            "idle screen back \(String(format: "%.2f", Date().timeIntervalSince(lost))) s after the sender was killed")
        XCTAssertLessThan(idle.fraction(of: .blue, x: 640..<1280, y: 0..<360), 0.05, "the mirrored picture is gone")
        XCTAssertLessThan(idle.fraction(of: .red, x: 0..<640, y: 0..<360), 0.05, "the mirrored picture is gone")
        XCTAssertNotNil(
            receiver.waitForLine(containing: "finished: playbackError", timeout: 10), "\(receiver.output.suffix(8))")
        painter.stop()
    }

    /// A link shaped to 4 Mbit/s under a screen that changes every picture: the rate comes down to what the link
    /// carries and no backlog grows (the picture gets softer, not later). The backlog is read off castd's positions:
    /// each is the age of the unit it just decoded by the sender's capture times, sent with castd's wall time, so a
    /// growing queue shows as wall time running ahead of the positions.
    func testOnALinkOf4MbitThePictureGetsSofterNotLater() throws {
        let senderScreen = try XCTUnwrap(senderScreen)
        _ = try startReceiver()
        try lab.shape(.phone, rate: "4mbit")
        let painter = try paint(Fixtures.moving)
        _ = try capture(senderScreen, timeout: 20) { $0.fraction(of: .black, x: 0..<1280, y: 0..<720) < 0.5 }
        let mirror = try lab.start(
            on: .phone, [Paths.cast, "mirror", "--to", "Living Room", "--json"], environment: sender)
        XCTAssertNotNil(mirror.waitForLine(containing: #""state":"playing""#, timeout: 20), "\(mirror.output)")
        Thread.sleep(forTimeInterval: 16)
        let lines = mirror.output
        painter.stop()
        let positions = lines.compactMap { line -> (seconds: Double, at: Double)? in
            guard line.contains(#""event":"position""#),
                case .position(let seconds, let at)? = try? JSONDecoder().decode(
                    PlaybackEvent.self, from: Data(line.utf8))
            else { return nil }
            return (seconds, at)
        }
        // The last 8 s, after the rate has had time to come down.
        let start = try XCTUnwrap(positions.last, "castd sends positions: \(lines.suffix(6))").at - 8
        let window = positions.filter { $0.at >= start }
        XCTAssertGreaterThan(window.count, 20, "positions five times a second: \(window.count)")
        let lags = window.map { $0.at - $0.seconds }
        let growth = (lags.last ?? 0) - (lags.min() ?? 0)
        let figures = lines.filter { $0.contains(#""event":"mirror""#) }.suffix(8)
        let rates = figures.compactMap { line -> Int? in
            guard let range = line.range(of: #""bitRate":"#) else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        let targets = figures.compactMap { line -> Int? in
            guard let range = line.range(of: #""targetBitRate":"#) else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        print(
            "over 4 Mbit/s: backlog grew \(String(format: "%.3f", growth)) s over the last 8 s; bit rates sent "
                + "\(rates), asked \(targets)")
        XCTAssertLessThan(growth, 1, "no backlog grows (a generous bound: the link alone would add seconds)")
        XCTAssertFalse(targets.isEmpty, "\(figures)")
        // What was sent fits the link (the rate asked for may stay above it while the picture needs less: with a
        // read always waiting at the sender, pictures leave as they are made and no queue tells it to come down).
        XCTAssertFalse(rates.isEmpty, "\(figures)")
        XCTAssertLessThanOrEqual(rates.suffix(4).max() ?? .max, 4_200_000, "the rate sent is what the link carries")
    }

    func testAnUnpairedSenderIsRefused() throws {
        _ = try startReceiver(auth: "pin")
        let refused = try lab.run(on: .phone, [Paths.cast, "mirror", "--to", "Living Room"], environment: sender)
        XCTAssertEqual(refused.status, 4, "\(refused.stdout)\n\(refused.stderr)")
        XCTAssertTrue(refused.stderr.contains("requires pairing"), refused.stderr)
    }

    func testNoDisplayIsAUsageError() throws {
        var environment = sender
        environment["DISPLAY"] = ":199"
        let result = try lab.run(on: .phone, [Paths.cast, "mirror", "--to", "Living Room"], environment: environment)
        XCTAssertEqual(result.status, 2, "\(result.stdout)\n\(result.stderr)")
        XCTAssertTrue(result.stderr.contains("cannot open the X11 display :199"), result.stderr)
        environment.removeValue(forKey: "DISPLAY")
        let none = try lab.run(on: .phone, [Paths.cast, "mirror", "--to", "Living Room"], environment: environment)
        XCTAssertEqual(none.status, 2, "\(none.stdout)\n\(none.stderr)")
        XCTAssertTrue(none.stderr.contains("no X11 display"), none.stderr)
        // A Wayland session without Xwayland: refused with what it would take.
        environment["WAYLAND_DISPLAY"] = "wayland-1"
        let wayland = try lab.run(on: .phone, [Paths.cast, "mirror", "--to", "Living Room"], environment: environment)
        XCTAssertEqual(wayland.status, 2, "\(wayland.stdout)\n\(wayland.stderr)")
        XCTAssertTrue(wayland.stderr.contains("Wayland session without an X11 display"), wayland.stderr)
    }
}
