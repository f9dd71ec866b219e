import CastTestSupport
import Foundation
import XCTest

/// `cast mirror`'s features in the lab with the real programs (issue 32): one window instead of the screen, a window
/// that changes size and then closes, and several receivers. The sender's screen is one Xvfb; each castd shows its
/// picture full screen on an Xvfb of its own, read back with x11grab.
final class MirrorFeatureTests: ScreenLabTestCase {
    override class var labPrefix: String { "mf" }
    override class var labRooms: Int { 1 }

    private enum Fixtures {
        /// A picture of `width`×`height`, red on the left half and blue on the right.
        static func halves(width: Int, height: Int) -> String {
            "color=red:size=\(width)x\(height):rate=10,drawbox=x=\(width / 2):y=0:w=\(width / 2):h=\(height):color=blue:t=fill"
        }
    }

    /// ffplay showing the lavfi picture `graph` in a borderless window titled `title` of `width`×`height` at (`x`,
    /// `y`) on `screen` (there is no window manager: the window is where it is asked to be).
    private func paint(
        _ graph: String, on screen: VirtualDisplay, title: String = "mfpaint", at x: Int = 0, _ y: Int = 0,
        width: Int = 1280, height: Int = 720
    ) throws -> Daemon {
        try lab.start(
            on: .phone,
            [
                "ffplay", "-v", "error", "-an", "-noborder", "-window_title", title, "-left", "\(x)", "-top", "\(y)",
                "-x", "\(width)", "-y", "\(height)", "-f", "lavfi", "-i", graph,
            ],
            environment: ["DISPLAY": screen.display])
    }

    /// The id of the window titled `title` on `screen`, as xwininfo gives it (waits for it: at most 20 s).
    private func windowID(_ title: String, on screen: VirtualDisplay) throws -> String {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let result = try runCommand(["xwininfo", "-display", screen.display, "-name", title], timeout: 10)
            if let line = result.stdout.split(separator: "\n").first(where: { $0.contains("Window id:") }),
                let id = line.split(separator: " ").first(where: { $0.hasPrefix("0x") })
            {
                return String(id)
            }
            Thread.sleep(forTimeInterval: 0.2)
        }
        throw XCTSkip("no window \(title) on \(screen.display)")
    }

    /// Resizes the window `id` on `screen` (XResizeWindow, as a window manager would on the user's drag).
    private func resize(_ id: String, on screen: VirtualDisplay, width: Int, height: Int) throws {
        let script = """
            import ctypes, sys
            x11 = ctypes.CDLL("libX11.so.6")
            x11.XOpenDisplay.restype = ctypes.c_void_p
            x11.XResizeWindow.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_uint, ctypes.c_uint]
            x11.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
            x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
            display = x11.XOpenDisplay(sys.argv[1].encode())
            if not display:
                sys.exit("cannot open display " + sys.argv[1])
            x11.XResizeWindow(display, int(sys.argv[2], 16), int(sys.argv[3]), int(sys.argv[4]))
            x11.XSync(display, 0)
            x11.XCloseDisplay(display)
            """
        let result = try runCommand(
            ["python3", "-c", script, screen.display, id, "\(width)", "\(height)"], timeout: 20)
        XCTAssertEqual(result.status, 0, "cannot resize the window: \(result.stderr)")
    }

    /// A window of one colour (`pixel`, 0xRRGGBB) over the whole of `screen`, with no pointer of its own (the root's
    /// shows over it), until the lab stops it.
    private func fill(_ screen: VirtualDisplay, pixel: Int) throws -> Daemon {
        let script = """
            import ctypes, sys, time
            x11 = ctypes.CDLL("libX11.so.6")
            x11.XOpenDisplay.restype = ctypes.c_void_p
            x11.XDefaultRootWindow.restype = ctypes.c_ulong
            x11.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
            x11.XCreateSimpleWindow.restype = ctypes.c_ulong
            x11.XCreateSimpleWindow.argtypes = [ctypes.c_void_p, ctypes.c_ulong] + [ctypes.c_int] * 2 \\
                + [ctypes.c_uint] * 3 + [ctypes.c_ulong] * 2
            x11.XMapWindow.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
            x11.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
            display = x11.XOpenDisplay(sys.argv[1].encode())
            if not display:
                sys.exit("cannot open display " + sys.argv[1])
            window = x11.XCreateSimpleWindow(
                display, x11.XDefaultRootWindow(display), 0, 0, 1280, 720, 0, 0, int(sys.argv[2]))
            x11.XMapWindow(display, window)
            x11.XSync(display, 0)
            while True:
                time.sleep(1)
            """
        return try lab.start(on: .phone, ["python3", "-c", script, screen.display, "\(pixel)"])
    }

    /// The pixels in the 32×32 square around (`x`, `y`) that are not `colour`.
    private func others(than colour: Screenshot.Colour, in screen: Screenshot, around x: Int, _ y: Int) -> Int {
        var count = 0
        for row in y - 16..<y + 16 {
            for column in x - 16..<x + 16 where !colour.matches(screen.pixel(column, row)) { count += 1 }
        }
        return count
    }

    /// The cursor (XFixes) travels beside the pictures and castd draws it: the sender's pointer, moved (XWarpPointer),
    /// appears at its new place on castd's screen and is gone from the old one, over a screen that does not change.
    func testThePointerMovesOnTheReceiversScreen() throws {
        let receiverScreen = try startDisplay()
        let senderScreen = try startDisplay()
        _ = try startFullscreenReceiver("Living Room", on: .box, screen: receiverScreen)
        _ = try fill(senderScreen, pixel: 0x00A000)
        _ = try capture(senderScreen, timeout: 20) { $0.fraction(of: .green, x: 0..<1280, y: 0..<720) > 0.95 }
        try senderScreen.movePointer(to: 400, 300)
        let mirror = try lab.start(
            on: .phone, [Paths.cast, "mirror", "--to", "Living Room", "--json"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender", "DISPLAY": senderScreen.display])
        XCTAssertNotNil(mirror.waitForLine(containing: #""state":"playing""#, timeout: 20), "\(mirror.output)")
        // The pointer is X11's own (a black X edged in white, 16×16): tens of pixels of the square are not green.
        var shown = try capture(receiverScreen) {
            $0.fraction(of: .green, x: 0..<1280, y: 0..<720) > 0.95
                && self.others(than: .green, in: $0, around: 400, 300) > 20
        }
        XCTAssertGreaterThan(others(than: .green, in: shown, around: 400, 300), 20, "the pointer where it is")
        XCTAssertEqual(others(than: .green, in: shown, around: 900, 500), 0, "no pointer where it is not")

        try senderScreen.movePointer(to: 900, 500)
        shown = try capture(receiverScreen, timeout: 10) {
            self.others(than: .green, in: $0, around: 900, 500) > 20
                && self.others(than: .green, in: $0, around: 400, 300) == 0
        }
        XCTAssertGreaterThan(others(than: .green, in: shown, around: 900, 500), 20, "the pointer at its new place")
        XCTAssertEqual(others(than: .green, in: shown, around: 400, 300), 0, "and gone from the old one")
        let sent = mirror.output.last { $0.contains(#""event":"mirror""#) }
        print("the pointer moved on castd's screen; cast mirror's last figures: \(sent ?? "none")")
    }

    /// `--window`: only the window shows (not the black screen around it), the stream follows the window's new size,
    /// and closing the window ends mirroring with a word and exit 0.
    func testAWindowIsMirroredFollowsItsSizeAndEndsWhenItCloses() throws {
        let receiverScreen = try startDisplay()
        let senderScreen = try startDisplay()
        _ = try startFullscreenReceiver("Living Room", on: .box, screen: receiverScreen)
        let painter = try paint(
            Fixtures.halves(width: 640, height: 360), on: senderScreen, title: "mfwindow", at: 200, 150, width: 640,
            height: 360)
        let id = try windowID("mfwindow", on: senderScreen)
        _ = try capture(senderScreen, timeout: 20) { Screenshot.Colour.red.matches($0.pixel(300, 300)) }
        let mirror = try lab.start(
            on: .phone, [Paths.cast, "mirror", "--to", "Living Room", "--window", id, "--json"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender", "DISPLAY": senderScreen.display])
        XCTAssertNotNil(mirror.waitForLine(containing: #""state":"playing""#, timeout: 20), "\(mirror.output)")
        XCTAssertNotNil(
            mirror.waitForLine(containing: #""event":"naturalSize","height":360,"width":640"#, timeout: 10),
            "castd decodes pictures of the window's size: \(mirror.output.suffix(6))")
        // Full screen, the window's picture fills castd's screen: red on the left, blue on the right.
        let shown = try capture(receiverScreen) {
            $0.fraction(of: .red, x: 0..<600, y: 40..<680) > 0.9
                && $0.fraction(of: .blue, x: 680..<1280, y: 40..<680) > 0.9
        }
        XCTAssertGreaterThan(shown.fraction(of: .red, x: 0..<600, y: 40..<680), 0.9, "the window's left half")
        XCTAssertGreaterThan(shown.fraction(of: .blue, x: 680..<1280, y: 40..<680), 0.9, "the window's right half")

        // The window changes size: the stream follows (a new size at castd, and in cast's figures).
        let before = mirror.output.count
        try resize(id, on: senderScreen, width: 480, height: 270)
        XCTAssertNotNil(
            mirror.waitForLine(
                containing: #""event":"naturalSize","height":270,"width":480"#, timeout: 20, after: before),
            "castd follows the window's size: \(mirror.output.suffix(6))")
        XCTAssertNotNil(
            mirror.waitForLine(containing: #""width":480,"height":270"#, timeout: 10, after: before),
            "cast's figures say the new size: \(mirror.output.suffix(6))")

        // The window closes (ffplay ends): mirroring ends, saying why, exit 0; castd's idle screen is back.
        painter.stop()
        XCTAssertEqual(mirror.waitForExit(timeout: 20), 0, "\(mirror.output.suffix(6))")
        let ended = mirror.output.first { $0.contains(#""event":"mirrorEnded""#) }
        XCTAssertTrue(ended?.contains("the window \(id) was closed") == true, "\(mirror.output.suffix(6))")
        let idle = try capture(receiverScreen, timeout: 10) {
            $0.fraction(of: .red, x: 0..<600, y: 40..<680) < 0.05
        }
        XCTAssertLessThan(idle.fraction(of: .red, x: 0..<600, y: 40..<680), 0.05, "the mirrored window is gone")
    }

    /// `--window` with no such window, or a malformed id, and a receiver named twice: a usage error (exit 2) that says
    /// so.
    func testNoSuchWindowIsAUsageError() throws {
        let senderScreen = try startDisplay()
        let environment = ["XDG_CONFIG_HOME": "\(work!)/sender", "DISPLAY": senderScreen.display]
        let missing = try lab.run(
            on: .phone, [Paths.cast, "mirror", "--to", "Living Room", "--window", "0x1ffffff"],
            environment: environment)
        XCTAssertEqual(missing.status, 2, "\(missing.stdout)\n\(missing.stderr)")
        XCTAssertTrue(missing.stderr.contains("no window 0x1ffffff shown"), missing.stderr)
        let twice = try lab.run(
            on: .phone, [Paths.cast, "mirror", "--to", "Kitchen", "--to", "kitchen"], environment: environment)
        XCTAssertEqual(twice.status, 2, "\(twice.stdout)\n\(twice.stderr)")
        XCTAssertTrue(twice.stderr.contains("kitchen is named twice"), twice.stderr)
        let malformed = try lab.run(
            on: .phone, [Paths.cast, "mirror", "--to", "Living Room", "--window", "kitchen"], environment: environment)
        XCTAssertEqual(malformed.status, 2, "\(malformed.stdout)\n\(malformed.stderr)")
        XCTAssertTrue(malformed.stderr.contains("--window takes an X11 window id"), malformed.stderr)
    }

    /// A receiver that cannot decode H.264 (a castd whose FFmpeg lacks the decoder, as `CAST_TEST_NO_H264` makes it
    /// act): `cast mirror` ends with exit 1 and says why, in castd's words.
    func testAReceiverWithoutH264SaysSo() throws {
        let receiverScreen = try startDisplay()
        let senderScreen = try startDisplay()
        _ = try startFullscreenReceiver(
            "Living Room", on: .box, screen: receiverScreen, environment: ["CAST_TEST_NO_H264": "1"])
        let mirror = try lab.run(
            on: .phone, [Paths.cast, "mirror", "--to", "Living Room"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender", "DISPLAY": senderScreen.display], timeout: 30)
        XCTAssertEqual(mirror.status, 1, "\(mirror.stdout)\n\(mirror.stderr)")
        XCTAssertTrue(
            mirror.stderr.contains("mirroring on Living Room ended: ")
                && mirror.stderr.contains("has no H.264 decoder: it cannot show a mirrored screen"), mirror.stderr)
    }

    /// The sender's X server ends while it is mirrored: `cast mirror` ends with exit 1 and says so (Xlib's own
    /// handler would have ended the helper with its words on a pipe nobody shows, and `cast` with 0).
    func testTheSendersDisplayEndingIsAnError() throws {
        let receiverScreen = try startDisplay()
        let senderScreen = try startDisplay()
        _ = try startFullscreenReceiver("Living Room", on: .box, screen: receiverScreen)
        let mirror = try lab.start(
            on: .phone, [Paths.cast, "mirror", "--to", "Living Room", "--json"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender", "DISPLAY": senderScreen.display])
        XCTAssertNotNil(mirror.waitForLine(containing: #""state":"playing""#, timeout: 20), "\(mirror.output)")
        senderScreen.stop()
        XCTAssertEqual(mirror.waitForExit(timeout: 20), 1, "\(mirror.output.suffix(6))")
        XCTAssertTrue(
            mirror.output.contains { $0.contains("cast-mirror failed: the X11 display closed the connection") },
            "\(mirror.output.suffix(6))")
    }

    /// Several `--to`: one capture and encode, the same picture on each receiver; each receiver's events carry its
    /// name; `cast stop` on one leaves the other mirroring; stopping the second ends `cast mirror` with 0.
    func testSeveralReceiversShowTheSamePicture() throws {
        let livingRoomScreen = try startDisplay()
        let kitchenScreen = try startDisplay()
        let senderScreen = try startDisplay()
        _ = try startFullscreenReceiver("Living Room", on: .box, screen: livingRoomScreen)
        _ = try startFullscreenReceiver("Kitchen", on: .room1, screen: kitchenScreen)
        let painter = try paint(Fixtures.halves(width: 1280, height: 720), on: senderScreen)
        _ = try capture(senderScreen, timeout: 20) { Screenshot.Colour.blue.matches($0.pixel(1000, 300)) }
        let sender = ["XDG_CONFIG_HOME": "\(work!)/sender", "DISPLAY": senderScreen.display]
        let mirror = try lab.start(
            on: .phone, [Paths.cast, "mirror", "--to", "Living Room", "--to", "Kitchen", "--json"],
            environment: sender)
        for name in ["Living Room", "Kitchen"] {
            XCTAssertNotNil(
                mirror.waitForLine(
                    containing: #"{"receiver":"\#(name)","event":"playbackState","state":"playing""#, timeout: 20),
                "\(name) plays: \(mirror.output.suffix(8))")
        }
        for screen in [livingRoomScreen, kitchenScreen] {
            let shown = try capture(screen) {
                $0.fraction(of: .red, x: 0..<600, y: 0..<720) > 0.9
                    && $0.fraction(of: .blue, x: 680..<1280, y: 0..<720) > 0.9
            }
            XCTAssertGreaterThan(shown.fraction(of: .red, x: 0..<600, y: 0..<720), 0.9, "red on \(screen.display)")
            XCTAssertGreaterThan(shown.fraction(of: .blue, x: 680..<1280, y: 0..<720), 0.9, "blue on \(screen.display)")
        }

        // One receiver stopped: the other goes on (a change still reaches it), cast mirror still runs.
        XCTAssertEqual(try lab.run(on: .phone, [Paths.cast, "stop", "Kitchen"], environment: sender).status, 0)
        XCTAssertNotNil(
            mirror.waitForLine(containing: #"{"receiver":"Kitchen","event":"finished""#, timeout: 20),
            "\(mirror.output.suffix(8))")
        // A moving picture (far more than the kitchen's pipe holds: a copy waiting for it would stall the living
        // room), then a still green one.
        painter.stop()
        let moving = try paint("testsrc2=size=1280x720:rate=30", on: senderScreen)
        Thread.sleep(forTimeInterval: 3)
        moving.stop()
        let turned = try paint("color=green:size=1280x720:rate=10", on: senderScreen)
        let changed = try capture(livingRoomScreen) { $0.fraction(of: .green, x: 0..<1280, y: 0..<720) > 0.9 }
        XCTAssertGreaterThan(
            changed.fraction(of: .green, x: 0..<1280, y: 0..<720), 0.9, "the living room follows the sender's screen")
        XCTAssertNil(mirror.exitStatus, "cast mirror goes on for the living room: \(mirror.output.suffix(6))")

        XCTAssertEqual(try lab.run(on: .phone, [Paths.cast, "stop", "Living Room"], environment: sender).status, 0)
        XCTAssertEqual(mirror.waitForExit(timeout: 20), 0, "\(mirror.output.suffix(8))")
        turned.stop()
    }
}
