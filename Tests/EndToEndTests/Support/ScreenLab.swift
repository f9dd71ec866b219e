import CastTestSupport
import Foundation
import XCTest

/// A test in the lab with X screens of its own (Xvfb, read back with x11grab), as the mirroring tests need: a screen
/// for the sender and one for each castd. Each screen started with `startDisplay()` is stopped after the test, once
/// the lab's programs (which hold X connections) are, each by its pid.
///
/// Not thread-safe: each test's own thread starts its screens, and XCTest tears them down on that thread.
class ScreenLabTestCase: LabTestCase {
    private var displays: [VirtualDisplay] = []

    /// A new X screen (1280×720) of `server` started with `extraArguments`, stopped after the test.
    func startDisplay(_ server: VirtualDisplay.Server = .xvfb, _ extraArguments: [String] = []) throws
        -> VirtualDisplay
    {
        let display = try VirtualDisplay.start(server: server, extraArguments: extraArguments)
        displays.append(display)
        return display
    }

    /// castd named `name` on `host`, full screen on `screen`, without sound or pairing, once it is advertised.
    func startFullscreenReceiver(
        _ name: String = "Living Room", on host: Lab.Host = .box, screen: VirtualDisplay, _ extra: [String] = [],
        environment: [String: String] = [:]
    ) throws -> Daemon {
        let receiver = try lab.start(
            on: host,
            [
                Paths.castd, "--name", name, "--port", "0", "--state-dir", "\(work!)/state-\(host.rawValue)",
                "--video-out", "fullscreen", "--audio-device", "none", "--auth", "none",
            ] + extra,
            environment: environment.merging(["DISPLAY": screen.display]) { $1 })
        XCTAssertNotNil(receiver.waitForLine(containing: "advertised as"), "\(receiver.output)")
        return receiver
    }

    override func tearDown() {
        // The programs first (they hold X connections), then the X servers, the last started first.
        lab?.tearDown()
        for display in displays.reversed() { display.stop() }
        displays = []
        super.tearDown()
    }

    /// Captures `display` until `ready` holds (at most `timeout` seconds); the last capture.
    func capture(_ display: VirtualDisplay, timeout: Double = 30, until ready: (Screenshot) -> Bool) throws
        -> Screenshot
    {
        let deadline = Date().addingTimeInterval(timeout)
        var screen = try display.capture()
        while !ready(screen) && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.2)
            screen = try display.capture()
        }
        return screen
    }
}

/// A mirroring test's two screens, started before each test: the sender's (the phone's, which `cast mirror` reads)
/// and the receiver's (where castd shows its full-screen window).
class SenderAndReceiverScreensTestCase: ScreenLabTestCase {
    private(set) var senderScreen: VirtualDisplay?
    private(set) var receiverScreen: VirtualDisplay?

    override func setUpWithError() throws {
        try super.setUpWithError()
        receiverScreen = try startDisplay()
        senderScreen = try startDisplay()
    }
}
