import Foundation
import XCTest

/// castd renamed while it runs (SIGHUP with a changed config), in the lab: both of its mDNS services, the Cast
/// service and the AirPlay video service, are withdrawn under the old name and published under the new one, as the
/// real avahi-browse on the phone sees them.
final class ReceiverRenameTests: XCTestCase {
    private var lab: Lab!
    private var work: String!

    override func setUpWithError() throws {
        lab = try Lab("rsn\(getpid() % 100000)")
        work = NSTemporaryDirectory() + "castd-rename-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
    }

    override func tearDown() {
        lab?.tearDown()
        if let work { try? FileManager.default.removeItem(atPath: work) }
    }

    func testRenameRepublishesTheCastAndAirPlayServicesUnderTheNewName() throws {
        let config = "\(work!)/castd.conf"
        func write(name: String) throws {
            try "name = \(name)\nairplay-video = yes\nairplay-port = 0\n".write(
                toFile: config, atomically: true, encoding: .utf8)
        }
        try write(name: "Den")
        let receiver = try lab.start(
            on: .box,
            [
                Paths.castd, "--config", config, "--auth", "none", "--port", "0", "--state-dir", "\(work!)/state",
                "--video-out", "none", "--audio-device", "none",
            ])
        // Follow the phone's browses as they happen (`-t` can wait on a stuck resolver for 20 s).
        let cast = try lab.start(on: .phone, ["avahi-browse", "-p", "-r", "_castd._tcp"])
        defer { cast.stop() }
        let airPlay = try lab.start(on: .phone, ["avahi-browse", "-p", "-r", "_airplay._tcp"])
        defer { airPlay.stop() }
        func entry(_ mark: String, _ name: String) -> (String) -> Bool {
            { $0.hasPrefix(mark) && $0.contains(";\(name);") }
        }
        let castDen = try XCTUnwrap(cast.waitForLine(timeout: 15, where: entry("=", "Den")), "\(receiver.output)")
        XCTAssertTrue(castDen.contains("\"fn=Den\""), castDen)
        XCTAssertNotNil(airPlay.waitForLine(timeout: 15, where: entry("=", "Den")), "\(receiver.output)")

        let (castSeen, airPlaySeen) = (cast.output.count, airPlay.output.count)
        try write(name: "Study")
        kill(receiver.pid, SIGHUP)
        XCTAssertNotNil(receiver.waitForLine(containing: "renamed from \"Den\" to \"Study\""), "\(receiver.output)")

        // Each service: the old name's goodbye, the new name resolved (the Cast one carrying the new name in its TXT).
        XCTAssertNotNil(
            cast.waitForLine(timeout: 15, after: castSeen, where: entry("-", "Den")), "no goodbye: \(cast.output)")
        let castStudy = try XCTUnwrap(
            cast.waitForLine(timeout: 15, after: castSeen, where: entry("=", "Study")), "\(cast.output)")
        XCTAssertTrue(castStudy.contains("\"fn=Study\""), castStudy)
        XCTAssertNotNil(
            airPlay.waitForLine(timeout: 15, after: airPlaySeen, where: entry("-", "Den")),
            "no goodbye: \(airPlay.output)")
        XCTAssertNotNil(
            airPlay.waitForLine(timeout: 15, after: airPlaySeen, where: entry("=", "Study")), "\(airPlay.output)")
        XCTAssertNotNil(receiver.waitForLine(containing: "advertised as \"Study\" (_castd._tcp)"), "\(receiver.output)")
        XCTAssertNotNil(
            receiver.waitForLine(containing: "advertised as \"Study\" (_airplay._tcp)"), "\(receiver.output)")
        XCTAssertTrue(receiver.isRunning)
    }
}
