import CastTestSupport
import Foundation
import XCTest

/// CastKit's movie inside another program's window (the seeds' `MPMoviePlayerController.view` added to an app's
/// view): a small Xlib program owns a 640×360 window at (100, 80) on a private X server; the movie-player example
/// gets its id (`player.view.x11Window`) and a background colour (`player.backgroundView.backgroundColor`), and the
/// screen is read back with ffmpeg's x11grab.
final class HostedViewTests: XCTestCase {
    private var display: VirtualDisplay?
    private var work = ""
    private var started: [Daemon] = []

    /// The host window on the 1280×720 screen, and the background colour given to the player.
    private static let host = (x: 100, y: 80, width: 640, height: 360)
    private static let background = (r: 255, g: 200, b: 0)

    override func setUpWithError() throws {
        display = try VirtualDisplay.start()
        work = NSTemporaryDirectory() + "cast-hosted-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
    }

    override func tearDown() {
        // The programs first (they hold X connections), then the X server, each by pid.
        for daemon in started { daemon.stop() }
        display?.stop()
        try? FileManager.default.removeItem(atPath: work)
    }

    /// The 4:3 banded clip (red, a green band on top, a blue band on the left) in the 16:9 window, `aspectFit` and
    /// `none`: the picture where the mode puts it inside the window, the background colour around it, and nothing
    /// drawn outside the window (the root stays black); the window is the program's: it keeps its size and place.
    func testTheMovieIsDrawnInsideTheApplicationsWindowWithItsBackground() throws {
        let display = try XCTUnwrap(display)
        let clip = try WindowTests.bandedClip(in: work, seconds: 120)
        let window = try startHostWindow(on: display)
        for mode in ["aspectFit", "none"] {
            let player = try Daemon(
                [
                    Paths.example("movie-player"), clip, "--in-window", window, "--background", "ffc800", "--scaling",
                    mode,
                ],
                environment: ["DISPLAY": display.display, "ALSA_CONFIG_PATH": Media.alsaConfig])
            started.append(player)
            let screen = try waitForScreen(display) { Self.measure(mode, $0).allSatisfy { $0.share > 0.99 } }
            _ = try display.capture(save: "\(work)/hosted-\(mode).png")
            for (what, share) in Self.measure(mode, screen) {
                print("\(mode): \(what): \(String(format: "%.1f", share * 100)) %")
                XCTAssertGreaterThan(share, 0.99, "\(mode): \(what); \(player.output.suffix(5))")
            }
            XCTAssertTrue(player.isRunning, "\(player.output.suffix(5))")
            player.stop()
        }
    }

    /// Where each colour must be on screen (a margin of 4 pixels at every edge, where scaling blends colours).
    private static func measure(_ mode: String, _ s: Screenshot) -> [(what: String, share: Double)] {
        let h = host
        // aspectFit: ×1.5, 480×360 centred: window x 80..<560; bands 30 rows and 30 columns.
        // none: 320×240 centred: window x 160..<480, y 60..<300; bands 20.
        let (x, y, band) = mode == "aspectFit" ? (80..<560, 0..<360, 30) : (160..<480, 60..<300, 20)
        let m = 4
        let picture = (x: (h.x + x.lowerBound)..<(h.x + x.upperBound), y: (h.y + y.lowerBound)..<(h.y + y.upperBound))
        let backdrop = Screenshot.Colour.near(r: background.r, g: background.g, b: background.b)
        var results: [(String, Double)] = [
            (
                "red body",
                s.fraction(
                    of: .red, x: (picture.x.lowerBound + band + m)..<(picture.x.upperBound - m),
                    y: (picture.y.lowerBound + band + m)..<(picture.y.upperBound - m))
            ),
            (
                "green band",
                s.fraction(
                    of: .green, x: (picture.x.lowerBound + band + m)..<(picture.x.upperBound - m),
                    y: (picture.y.lowerBound + m)..<(picture.y.lowerBound + band - m))
            ),
            (
                "blue band",
                s.fraction(
                    of: .blue, x: (picture.x.lowerBound + m)..<(picture.x.lowerBound + band - m),
                    y: (picture.y.lowerBound + band + m)..<(picture.y.upperBound - m))
            ),
            // The background: left and right of the picture inside the window (and above and below it for `none`).
            (
                "background left",
                s.fraction(of: backdrop, x: (h.x + m)..<(picture.x.lowerBound - m), y: (h.y + m)..<(h.y + h.height - m))
            ),
            (
                "background right",
                s.fraction(
                    of: backdrop, x: (picture.x.upperBound + m)..<(h.x + h.width - m),
                    y: (h.y + m)..<(h.y + h.height - m))
            ),
            // Outside the window: the root window, untouched.
            ("black left of the window", s.fraction(of: .black, x: 0..<(h.x - m), y: 0..<720)),
            ("black right of the window", s.fraction(of: .black, x: (h.x + h.width + m)..<1280, y: 0..<720)),
            ("black above the window", s.fraction(of: .black, x: h.x..<(h.x + h.width), y: 0..<(h.y - m))),
            ("black below the window", s.fraction(of: .black, x: h.x..<(h.x + h.width), y: (h.y + h.height + m)..<720)),
        ]
        if mode == "none" {
            results.append(
                ("background above", s.fraction(of: backdrop, x: picture.x, y: (h.y + m)..<(picture.y.lowerBound - m))))
            results.append(
                (
                    "background below",
                    s.fraction(of: backdrop, x: picture.x, y: (picture.y.upperBound + m)..<(h.y + h.height - m))
                ))
        }
        return results
    }

    /// Waits (up to 30 s) until `ready` holds for the screen twice in a row.
    private func waitForScreen(_ display: VirtualDisplay, until ready: (Screenshot) -> Bool) throws -> Screenshot {
        let deadline = Date().addingTimeInterval(30)
        var held = 0
        var screen = try display.capture()
        while Date() < deadline {
            held = ready(screen) ? held + 1 : 0
            if held >= 2 { break }
            Thread.sleep(forTimeInterval: 0.2)
            screen = try display.capture()
        }
        return screen
    }

    /// Starts the application: an Xlib program that opens a plain window (black, no children) at `host`'s place and
    /// size, maps it and prints its id; it stays until stopped.
    private func startHostWindow(on display: VirtualDisplay) throws -> String {
        let source = "\(work)/host-window.c"
        let h = Self.host
        try #"""
        #include <X11/Xlib.h>
        #include <stdio.h>
        int main(void) {
            Display *d = XOpenDisplay(NULL);
            if (!d) return 2;
            Window w = XCreateSimpleWindow(d, DefaultRootWindow(d), \#(h.x), \#(h.y), \#(h.width), \#(h.height), 0,
                0, BlackPixel(d, DefaultScreen(d)));
            XSelectInput(d, w, ExposureMask);
            XMapWindow(d, w);
            XSync(d, False);
            printf("window 0x%lx\n", (unsigned long)w);
            fflush(stdout);
            for (;;) { XEvent e; XNextEvent(d, &e); }
        }
        """#.write(toFile: source, atomically: true, encoding: .utf8)
        let program = try WindowTests.buildXlibProgram(source)
        let host = try Daemon([program], environment: ["DISPLAY": display.display])
        started.append(host)
        let line = try XCTUnwrap(host.waitForLine(containing: "window 0x", timeout: 10), "\(host.output)")
        return String(line.dropFirst("window ".count))
    }
}
