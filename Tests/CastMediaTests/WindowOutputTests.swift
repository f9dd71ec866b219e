import CastProtocol
import CastTestSupport
import Foundation
import XCTest

@testable import CastMedia

/// `.window` and `.fullscreen` on a private Xvfb display: what reaches the screen is read back with ffmpeg's x11grab.
final class WindowOutputTests: XCTestCase {
    private var display: VirtualDisplay?

    override func setUpWithError() throws {
        display = try VirtualDisplay.start(settingDISPLAY: true)
    }

    override func tearDown() {
        // SDL lets the display go on its own thread after the last player finished; the X server must outlive that.
        WindowOutput.shared.waitUntilClosed()
        display?.stop()
        display = nil
    }

    /// Xvfb has no GPU: Mesa draws its OpenGL on the CPU, far more dearly than SDL's software renderer into the
    /// window through MIT-SHM, which the window takes then (`WindowRenderer.makeRenderer`).
    func testWhereOpenGLIsDrawnOnTheCPUTheWindowDrawsWithSDLsSoftwareRenderer() throws {
        let token = try WindowOutput.shared.acquire(mode: .windowed, scaling: nil)
        defer { WindowOutput.shared.release(token) }
        XCTAssertEqual(WindowOutput.shared.rendererName, "software")
    }

    func testWindowShowsTheClipAtItsNaturalSizeCentred() throws {
        let display = try XCTUnwrap(display)
        let clip = try WindowFixtures.bandedClip(in: try Fixtures.folder())
        let run = try PlayingRun(clip: clip, video: .window)
        run.sleep(until: 1.0)
        let screen = try display.capture()
        run.finish()

        // The 320×240 window sits in the middle of the 1280×720 screen: x 480..<800, y 240..<480.
        screen.assert(.red, at: 640, 360)
        screen.assert(.green, at: 640, 250, "the clip's top band, at the window's top")
        screen.assert(.blue, at: 490, 360, "the clip's left band, at the window's left")
        screen.assert(.black, at: 400, 360, "outside the window")
        screen.assert(.black, at: 640, 200, "outside the window")
        run.assertPlayedToTheEnd(seconds: 2)
    }

    /// A clip that costs far more than real time to decode and show (1280×720 at 1000 fps: 2 ms of decoding per
    /// frame here, with 1 ms to spare) plays in real time by dropping frames: every decoded frame is either presented
    /// (a line of the timing log) or counted as dropped, the count is in the access log, and framemd5 of the same
    /// clip drops nothing.
    func testAVideoTooExpensiveForRealTimeDropsFramesAndCountsThem() throws {
        let folder = try Fixtures.folder()
        let clip = folder.appendingPathComponent("expensive.mp4").path
        let frames = 500
        try Fixtures.run(
            "ffmpeg",
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=1000:duration=0.5", "-c:v",
                "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", clip,
            ])
        let timing = folder.appendingPathComponent("timing.log").path
        var configuration = PlayerConfiguration(audio: .none, video: .window)
        configuration.timingLog = timing
        let log = EventLog()
        let player = Player(source: try FileSource(path: clip), configuration: configuration) { log.append($0) }
        player.start()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread { [player] in
            player.waitUntilFinished()
            done.signal()
        }
        if done.wait(timeout: .now() + 30) != .success {
            player.stop()
            return XCTFail("player hung")
        }
        XCTAssertEqual(log.finish?.reason, .playbackEnded, "\(log.events)")
        let presented = try String(contentsOfFile: timing, encoding: .utf8).split(separator: "\n")
            .filter { $0.hasPrefix("video ") }.count
        let dropped = player.droppedVideoFrames
        let accessLog = log.events.compactMap { event -> AccessLogEntry? in
            if case .accessLog(let entry) = event { return entry }
            return nil
        }.last
        print("expensive clip: \(presented) presented, \(dropped) dropped of \(frames)")
        XCTAssertGreaterThan(dropped, 0, "\(presented) presented")
        XCTAssertEqual(presented + dropped, frames, "every frame is presented or counted as dropped")
        XCTAssertEqual(accessLog?.droppedFrames, dropped, "the access log reports the count")

        // framemd5 must see every frame: the same clip drops nothing there.
        let md5 = folder.appendingPathComponent("expensive.md5").path
        let exact = Player(
            source: try FileSource(path: clip),
            configuration: PlayerConfiguration(audio: .none, video: .framemd5(path: md5))
        ) { _ in }
        exact.start()
        exact.waitUntilFinished()
        XCTAssertEqual(exact.droppedVideoFrames, 0)
        XCTAssertEqual(exact.accessLog().droppedFrames, 0)
        let lines = try String(contentsOfFile: md5, encoding: .utf8).split(separator: "\n").filter {
            !$0.hasPrefix("#")
        }
        XCTAssertEqual(lines.count, frames)
    }

    func testFullscreenFillsTheDisplayAndSwitchesScalingModesWhilePlaying() throws {
        let display = try XCTUnwrap(display)
        let clip = try WindowFixtures.bandedClip(in: try Fixtures.folder(), seconds: 4)
        let run = try PlayingRun(clip: clip, video: .fullscreen)

        // aspectFit (the default): 4:3 in 16:9 is 960×720 at x 160..<1120, black bars left and right.
        run.sleep(until: 0.8)
        var screen = try display.capture()
        screen.assert(.black, at: 80, 360, "left bar")
        screen.assert(.black, at: 1200, 360, "right bar")
        screen.assert(.red, at: 640, 360)
        screen.assert(.green, at: 640, 20, "top band, scaled ×3 to 60 rows")
        screen.assert(.blue, at: 180, 360, "left band at the picture's left edge")

        // aspectFill: ×4 to 1280×960, 120 rows cropped top and bottom, which takes the 20-row top band away.
        run.player.setScalingMode(.aspectFill)
        run.sleep(until: 1.5)
        screen = try display.capture()
        screen.assert(.red, at: 640, 10, "top band cropped")
        screen.assert(.blue, at: 20, 360, "left band at the screen's left edge")
        screen.assert(.red, at: 640, 360)

        // fill: stretched ×4 across, ×3 down.
        run.player.setScalingMode(.fill)
        run.sleep(until: 2.2)
        screen = try display.capture()
        screen.assert(.green, at: 640, 20, "top band, 60 rows")
        screen.assert(.blue, at: 20, 360, "left band, 80 columns")
        screen.assert(.red, at: 200, 360)
        screen.assert(.red, at: 1260, 700)

        // none: 320×240 centred, black around it.
        run.player.setScalingMode(.none)
        run.sleep(until: 2.9)
        screen = try display.capture()
        screen.assert(.red, at: 640, 360)
        screen.assert(.green, at: 640, 250)
        screen.assert(.blue, at: 490, 360)
        screen.assert(.black, at: 400, 360)
        screen.assert(.black, at: 640, 200)

        run.finish()
        run.assertPlayedToTheEnd(seconds: 4)
    }

    /// Full screen covers a display larger than the idle window even without a window manager (Xvfb has none: SDL's
    /// request for full screen went unanswered and the window kept 1280×720 in the middle of a 1920×1080 screen).
    func testFullscreenCoversADisplayLargerThanTheIdleWindow() throws {
        display?.stop()
        let display = try VirtualDisplay.start(settingDISPLAY: true, width: 1920, height: 1080)
        self.display = display
        let clip = try WindowFixtures.bandedClip(in: try Fixtures.folder(), seconds: 2)
        let run = try PlayingRun(clip: clip, video: .fullscreen)

        // aspectFit: 4:3 in 16:9 is 1440×1080 at x 240..<1680, each source pixel 4.5 screen pixels.
        run.sleep(until: 0.8)
        let screen = Screenshot(bytes: [UInt8](try display.rgbBytes()), width: 1920, height: 1080)
        screen.assert(.red, at: 960, 540)
        screen.assert(.green, at: 960, 30, "top band, 90 rows from the screen's top")
        screen.assert(.blue, at: 260, 540, "left band at the picture's left edge")
        screen.assert(.red, at: 1600, 1000, "the picture reaches the screen's bottom")
        screen.assert(.black, at: 100, 540, "left bar")
        screen.assert(.black, at: 1800, 1000, "right bar, to the screen's corner")
        run.finish()
        run.assertPlayedToTheEnd(seconds: 2)
    }

    func testPixelFormatsThatSDLCannotTakeAreConverted() throws {
        let display = try XCTUnwrap(display)
        let folder = try Fixtures.folder()
        // yuv444p and gbrp go through swscale (to YUV 4:2:0 and to BGRA); rgb24 is uploaded as it is.
        let cases: [(name: String, codec: [String])] = [
            ("yuv444p.mp4", ["-c:v", "libx264", "-pix_fmt", "yuv444p"]),
            ("gbrp.mkv", ["-c:v", "libx264rgb", "-pix_fmt", "gbrp"]),
            ("rgb24.mov", ["-c:v", "png", "-pix_fmt", "rgb24"]),
        ]
        for (name, codec) in cases {
            let clip = try WindowFixtures.bandedClip(in: folder, seconds: 1, name: name, codec: codec)
            let run = try PlayingRun(clip: clip, video: .fullscreen)
            run.sleep(until: 0.5)
            let screen = try display.capture()
            run.finish()
            screen.assert(.red, at: 640, 360, name)
            screen.assert(.green, at: 640, 20, name)
            screen.assert(.blue, at: 180, 360, name)
            screen.assert(.black, at: 80, 360, name)
            run.assertPlayedToTheEnd(seconds: 1)
        }
    }

    func testClosingTheWindowHidesItAndPlaybackGoesOn() throws {
        let display = try XCTUnwrap(display)
        let clip = try WindowFixtures.bandedClip(in: try Fixtures.folder())
        let closedBefore = WindowOutput.shared.closedByUserCount
        let run = try PlayingRun(clip: clip, video: .window)
        run.sleep(until: 0.6)
        try display.capture().assert(.red, at: 640, 360)
        WindowOutput.shared.simulateUserClose()
        run.sleep(until: 1.2)
        try display.capture().assert(.black, at: 640, 360, "the window is hidden")
        run.finish()
        XCTAssertEqual(WindowOutput.shared.closedByUserCount, closedBefore + 1)
        run.assertPlayedToTheEnd(seconds: 2)

        // The next playback shows the window again.
        let again = try PlayingRun(clip: clip, video: .window)
        again.sleep(until: 0.8)
        try display.capture().assert(.red, at: 640, 360, "shown again")
        again.finish()
        again.assertPlayedToTheEnd(seconds: 2)
    }

    func testWithoutADisplayPlaybackFailsWithAClearMessage() throws {
        let clip = try WindowFixtures.bandedClip(in: try Fixtures.folder(), seconds: 1)
        let saved = ProcessInfo.processInfo.environment["DISPLAY"]
        unsetenv("DISPLAY")
        defer { if let saved { setenv("DISPLAY", saved, 1) } }
        for video in [VideoOutput.window, .fullscreen] {
            let (log, seconds) = try play(try FileSource(path: clip), video: video)
            XCTAssertEqual(log.finish?.reason, .playbackError, "\(log.events)")
            let message = log.finish?.error ?? ""
            print("no display: \(message) after \(seconds) s")
            XCTAssertTrue(message.contains("cannot open a video window"), message)
            XCTAssertTrue(message.contains("DISPLAY"), message)
            XCTAssertLessThan(seconds, 1)
        }
        XCTAssertThrowsError(try VideoWindow())
    }

    func testAVideoWindowStaysOpenBetweenPlaybacksShowingTheIdleScreen() throws {
        let display = try XCTUnwrap(display)
        let clip = try WindowFixtures.bandedClip(in: try Fixtures.folder(), seconds: 3)
        let window = try VideoWindow()
        defer { window.close() }
        Thread.sleep(forTimeInterval: 0.3)
        // Idle: a black 1280×720 window; nothing to tell it from the black root but that it is mapped, so check
        // the picture after playback goes back to black.
        try display.capture().assert(.black, at: 640, 360, "idle")
        let run = try PlayingRun(clip: clip, video: .window)
        // The picture while it plays (its start-up took over 0.5 s on a loaded machine: waited for, within the clip).
        let shown = waitUntil(timeout: 2.5) {
            (try? display.capture()).map { Screenshot.Colour.red.matches($0.pixel(640, 360)) } ?? false
        }
        XCTAssertTrue(
            shown, "no picture at (640, 360) while playing: \((try? display.capture())?.pixel(640, 360) as Any)")
        run.finish()
        run.assertPlayedToTheEnd(seconds: 3)
        Thread.sleep(forTimeInterval: 0.3)
        try display.capture().assert(.black, at: 640, 360, "idle again after playback")
    }

    /// castd's idle window steps aside while its decoder worker shows video: unmapped but open, counted (a stopping
    /// worker and the next one may overlap), and mapped again, idle, once every step aside was matched.
    func testAVideoWindowStepsAsideAndComesBack() throws {
        let display = try XCTUnwrap(display)
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/xwininfo") else {
            throw XCTSkip("xwininfo (x11-utils) is not installed")
        }
        let window = try VideoWindow()
        defer { window.close() }
        XCTAssertTrue(display.waitForMapState("IsViewable"), "the idle window is on screen")
        window.stepAside()
        window.stepAside()
        XCTAssertTrue(display.waitForMapState("IsUnMapped"), "stepped aside")
        window.comeBack()
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertEqual(display.mapState(), "IsUnMapped", "one step aside is still unmatched")
        window.comeBack()
        XCTAssertTrue(display.waitForMapState("IsViewable"), "back")
        // An unmatched comeBack changes nothing, and the next step aside still works.
        window.comeBack()
        window.stepAside()
        XCTAssertTrue(display.waitForMapState("IsUnMapped"), "stepped aside again")
        window.comeBack()
        XCTAssertTrue(display.waitForMapState("IsViewable"), "back again")
        try display.capture().assert(.black, at: 640, 360, "the idle screen")
    }
}

/// One playback running in the background, timed from its start.
private final class PlayingRun {
    let player: Player
    let log = EventLog()
    let started = Date()
    private let done = DispatchSemaphore(value: 0)
    private(set) var seconds = 0.0

    init(clip: String, video: VideoOutput) throws {
        let log = self.log
        player = Player(
            source: try FileSource(path: clip), configuration: PlayerConfiguration(audio: .none, video: video)
        ) {
            log.append($0)
        }
        player.start()
        Thread.detachNewThread { [player, done] in
            player.waitUntilFinished()
            done.signal()
        }
    }

    /// Sleeps until `offset` seconds after the start.
    func sleep(until offset: Double) {
        let left = offset - Date().timeIntervalSince(started)
        if left > 0 { Thread.sleep(forTimeInterval: left) }
    }

    /// Waits for the end (20 s at most).
    func finish() {
        if done.wait(timeout: .now() + 20) != .success {
            player.stop()
            XCTFail("player hung")
        }
        seconds = Date().timeIntervalSince(started)
    }

    /// Played to the end in real time: `expected` seconds from the playing event to the finish, with the start-up
    /// (probing, and opening SDL and the window, which is slower on a loaded machine) measured apart.
    func assertPlayedToTheEnd(seconds expected: Double, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(log.finish?.reason, .playbackEnded, "\(log.events)", file: file, line: line)
        XCTAssertNil(log.finish?.error ?? nil, file: file, line: line)
        XCTAssertTrue(log.events.contains(.videoActive(true)), file: file, line: line)
        let timed = log.timed
        let playing = timed.first { $0.event == .playbackState(.playing) }?.time
        let finished = timed.first {
            if case .finished = $0.event { return true }
            return false
        }?.time
        guard let playing, let finished else { return XCTFail("no playing or finished event", file: file, line: line) }
        let played = finished.timeIntervalSince(playing)
        let startUp = playing.timeIntervalSince(started)
        print("wall time \(seconds) s for \(expected) s: start-up \(startUp) s, playing to finished \(played) s")
        XCTAssertEqual(played, expected, accuracy: 0.15, file: file, line: line)
        // A bound that catches a stuck start, not a speed goal (0.62 s was seen on a loaded machine; the time to the
        // first frame is measured by scripts/bench-first-frame).
        XCTAssertLessThan(startUp, 3, file: file, line: line)
    }

}

extension VirtualDisplay {
    /// The map state of the window named "Cast" (`IsViewable`, `IsUnMapped`), as xwininfo reports it; nil when there
    /// is no such window.
    fileprivate func mapState() -> String? {
        guard let data = try? Fixtures.run("xwininfo", ["-display", ":\(number)", "-name", "Cast"]) else { return nil }
        let line = String(decoding: data, as: UTF8.self).split(separator: "\n").first { $0.contains("Map State:") }
        return line.map { String($0.split(separator: ":").last ?? "").trimmingCharacters(in: .whitespaces) }
    }

    /// Waits up to 5 s for the window's map state to be `state`.
    fileprivate func waitForMapState(_ state: String) -> Bool {
        let deadline = Date().addingTimeInterval(5)
        while mapState() != state {
            if Date() > deadline { return false }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return true
    }

    /// The whole screen now, as RGB, without the pointer.
    fileprivate func capture() throws -> Screenshot {
        Screenshot(bytes: [UInt8](try rgbBytes()), width: 1280, height: 720)
    }
}

private enum WindowFixtures {
    /// A 4:3 clip (320×240, 25 fps): red, with a green band over the top 20 rows and a blue band down the left 20
    /// columns, so that crops, bars and stretches show in a screenshot.
    static func bandedClip(
        in folder: URL, seconds: Int = 2, name: String = "banded.mp4",
        codec: [String] = ["-c:v", "libx264", "-pix_fmt", "yuv420p"]
    ) throws -> String {
        let path = folder.appendingPathComponent(name).path
        let graph =
            "color=c=red:size=320x240:rate=25:duration=\(seconds),"
            + "drawbox=x=0:y=0:w=320:h=20:color=green:t=fill,drawbox=x=0:y=20:w=20:h=220:color=blue:t=fill"
        try Fixtures.run("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", graph] + codec + [path])
        return path
    }
}
