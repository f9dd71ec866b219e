import CastTestSupport
import Foundation
import XCTest

/// An AirPlay photo on castd's full-screen window (Xvfb, read back with x11grab): fitted as a video frame is, aspect
/// kept, and still there seconds later; `/stop` gives the screen back to the idle screen.
final class AirPlayPhotoWindowTests: ScreenLabTestCase {
    override class var labPrefix: String { "phw" }

    func testAPhotoFillsTheScreenAspectKeptUntilStopped() throws {
        let display = try startDisplay()
        let receiver = try startFullscreenReceiver(screen: display, ["--airplay-video", "--airplay-port", "0"])
        let line = try XCTUnwrap(receiver.waitForLine(containing: "AirPlay video on port"), "\(receiver.output)")
        let port = try XCTUnwrap(
            line.split(separator: " ").drop { $0 != "port" }.dropFirst().first.flatMap { UInt16($0) }, line)
        // A 4:3 picture, red on its left half and blue on its right: on a 16:9 screen, 960×720 with bars beside it.
        let photo = "\(work!)/photo.jpg"
        let made = try runCommand([
            "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
            "color=red:size=320x240,drawbox=x=160:w=160:h=240:color=blue:t=fill", "-frames:v", "1", photo,
        ])
        XCTAssertEqual(made.status, 0, made.stderr)
        let idle = try display.capture()

        let client = try PhotoClient(lab: lab, port: port)
        let session = ["X-Apple-Session-ID": "9F3E5C2A-0000-4000-8000-00000000F071"]
        XCTAssertEqual(try client.send(headers: session, body: photo), "200 OK", "\(receiver.output.suffix(10))")
        func isThePhoto(_ screen: Screenshot) -> Bool {
            let (left, right) = (screen.pixel(400, 360), screen.pixel(880, 360))
            return left.r > 180 && left.b < 80 && right.b > 180 && right.r < 80
        }
        let screen = try capture(display, timeout: 10, until: isThePhoto)
        XCTAssertTrue(isThePhoto(screen), "the photo is not on the screen")
        for x in [100, 1180] {
            XCTAssertTrue(Screenshot.Colour.black.matches(screen.pixel(x, 360)), "bar at \(x): \(screen.pixel(x, 360))")
        }
        print("photo on screen: left \(screen.pixel(400, 360)), right \(screen.pixel(880, 360)), bars black")

        // Held: 3 s later the same picture.
        Thread.sleep(forTimeInterval: 3)
        XCTAssertTrue(isThePhoto(try display.capture()), "the photo did not stay on screen")

        XCTAssertEqual(try client.send("POST", "/stop", headers: session), "200 OK")
        XCTAssertTrue(
            waitUntil(timeout: 10) { (try? display.capture()).map { !isThePhoto($0) } ?? false },
            "the photo stayed after /stop")
        XCTAssertFalse(isThePhoto(idle), "the idle screen looks like the photo: the test tells nothing")
        receiver.stop()
    }
}
