import CastTestSupport
import Foundation
import XCTest

/// What castd's full-screen window shows of a phone video and of an HDR clip, read back from the screen (Xvfb,
/// x11grab): the phone video stands upright (portrait, with bars either side, the right way up), and a PQ grey is
/// tone-mapped to the SDR grey the ffmpeg tool's zscale/tonemap chain makes, not shown as raw PQ code values.
final class VideoWindowTests: ScreenLabTestCase {
    override class var labPrefix: String { "e2vw" }

    func testAPhoneVideoStandsUprightAndPQIsToneMappedOnTheScreen() throws {
        let display = try startDisplay()
        let receiver = try startFullscreenReceiver(screen: display)

        // A landscape picture, red on the left and blue on the right, stored with a quarter turn.
        let landscape = "\(work!)/landscape.mp4"
        let phone = "\(work!)/phone.mp4"
        try make(
            [
                "-f", "lavfi", "-i",
                "color=red:size=320x180:rate=25:duration=20,drawbox=x=160:w=160:h=180:color=blue:t=fill",
                "-c:v", "libx264", "-pix_fmt", "yuv420p", landscape,
            ])
        try make(["-i", landscape, "-c", "copy", "-metadata:s:v:0", "rotate=90", phone])
        // ffmpeg's autorotated picture (180×320): which colour is on top, which below.
        let turned = try rgbFrame(phone, filters: nil, size: (180, 320))
        let (top, bottom) = (turned.pixel(90, 40), turned.pixel(90, 280))
        XCTAssertNotEqual(top.r > 128, bottom.r > 128, "ffmpeg's upright picture has red at one end")
        var screen = try showing(phone, on: display) { $0.pixel(640, 90).r + $0.pixel(640, 90).b > 200 }
        // Fitted to 1280×720: 405×720 at x 437...842, black bars beside it.
        XCTAssertTrue(
            Screenshot.Colour.black.matches(screen.pixel(300, 360)), "left bar: \(screen.pixel(300, 360))"
        )
        XCTAssertTrue(
            Screenshot.Colour.black.matches(screen.pixel(980, 360)),
            "right bar: \(screen.pixel(980, 360))")
        for (y, expected) in [(90, top), (630, bottom)] {
            let shown = screen.pixel(640, y)
            XCTAssertEqual(shown.r > 128, expected.r > 128, "row \(y): \(shown), ffmpeg \(expected)")
            XCTAssertEqual(shown.b > 128, expected.b > 128, "row \(y): \(shown), ffmpeg \(expected)")
        }
        print(
            "phone video on screen: top \(screen.pixel(640, 90)), bottom \(screen.pixel(640, 630)), bars black"
        )

        // HDR10 grey at reference white (203 nits: Y' 573 of 10-bit limited range), BT.2020, PQ.
        let pq = "\(work!)/pq.mkv"
        try make(
            [
                "-f", "lavfi", "-i", "color=black:size=160x90:rate=25:duration=20", "-vf",
                "format=yuv420p10le,geq=lum=573:cb=512:cr=512", "-c:v", "libx265", "-x265-params",
                "log-level=error",
                "-pix_fmt", "yuv420p10le", "-color_primaries", "bt2020", "-color_trc", "smpte2084",
                "-colorspace",
                "bt2020nc", pq,
            ])
        let chain =
            "zscale=tin=smpte2084:min=2020_ncl:pin=2020:rin=limited:t=linear:npl=100,format=gbrpf32le,zscale=p=709,"
            + "tonemap=tonemap=hable:desat=0,zscale=t=709:m=709:r=limited,format=yuv420p"
        let expected = try rgbFrame(pq, filters: chain, size: (160, 90)).pixel(80, 45)
        let raw = try rgbFrame(pq, filters: "format=yuv420p", size: (160, 90)).pixel(80, 45)
        screen = try showing(pq, on: display) { abs($0.pixel(640, 360).g - expected.g) <= 6 }
        let shown = screen.pixel(640, 360)
        print("PQ grey on screen \(shown), ffmpeg's tone map \(expected), PQ codes shown as SDR \(raw)")
        for (a, b) in [(shown.r, expected.r), (shown.g, expected.g), (shown.b, expected.b)] {
            XCTAssertEqual(a, b, accuracy: 6, "on screen \(shown), ffmpeg's tone map \(expected)")
        }
        XCTAssertGreaterThan(abs(expected.g - raw.g), 20, "the test tells tone-mapped from raw PQ")
        receiver.stop()
    }

    private func make(_ arguments: [String]) throws {
        let result = try runCommand(["ffmpeg", "-v", "error", "-y"] + arguments, timeout: 60)
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    /// ffmpeg's first picture of `path` (autorotated, through `filters`) as RGB.
    private func rgbFrame(_ path: String, filters: String?, size: (Int, Int)) throws -> Screenshot {
        let output = "\(work!)/frame.rgb"
        let vf = (filters.map { $0 + "," } ?? "") + "format=rgb24"
        try make(["-i", path, "-vf", vf, "-frames:v", "1", "-f", "rawvideo", output])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
        XCTAssertEqual(bytes.count, size.0 * size.1 * 3)
        return Screenshot(bytes: bytes, width: size.0, height: size.1)
    }

    /// Sends `path` and captures the screen until `ready` holds while it plays (at most 30 s); stops the playback.
    private func showing(
        _ path: String, on display: VirtualDisplay, until ready: (Screenshot) -> Bool
    ) throws
        -> Screenshot
    {
        let sender = ["XDG_CONFIG_HOME": "\(work!)/sender"]
        let send = try lab.start(
            on: .phone, [Paths.cast, "send", path, "--to", "Living Room", "--json"], environment: sender)
        XCTAssertNotNil(
            send.waitForLine(containing: #""state":"playing""#, timeout: 20), "\(send.output)")
        let screen = try capture(display, until: ready)
        _ = try lab.run(on: .phone, [Paths.cast, "stop", "Living Room"], environment: sender)
        _ = send.waitForExit(timeout: 20)
        return screen
    }
}
