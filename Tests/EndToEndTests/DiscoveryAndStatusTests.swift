import Foundation
import XCTest

/// Foundation, end to end in the lab: castd on the box, `cast` and the real avahi tools on the phone.
final class DiscoveryAndStatusTests: XCTestCase {
    private var lab: Lab!
    private var stateDir: String!
    private var senderConfig: String!

    override func setUpWithError() throws {
        lab = try Lab("e2d\(getpid() % 100000)")
        stateDir = NSTemporaryDirectory() + "castd-state-\(UUID().uuidString)"
        senderConfig = NSTemporaryDirectory() + "cast-config-\(UUID().uuidString)"
    }

    override func tearDown() {
        lab?.tearDown()
        for dir in [stateDir, senderConfig].compactMap({ $0 }) { try? FileManager.default.removeItem(atPath: dir) }
    }

    /// Starts castd on the box and waits until it is advertised; returns it and its port.
    private func startReceiver(name: String = "Living Room", auth: String = "none", extra: [String] = [])
        throws -> (Daemon, UInt16)
    {
        let daemon = try lab.start(
            on: .box,
            [
                Paths.castd, "--name", name, "--auth", auth, "--port", "0", "--video-out", "none", "--state-dir",
                stateDir,
            ]
                + extra)
        let listening = try XCTUnwrap(
            daemon.waitForLine(containing: "listening on port"), "castd did not start: \(daemon.output)")
        let port = try XCTUnwrap(UInt16(listening.split(separator: " ").drop { $0 != "port" }.dropFirst().first ?? ""))
        return (daemon, port)
    }

    private func cast(_ arguments: [String], timeout: Double = 30) throws -> CommandResult {
        try lab.run(
            on: .phone, [Paths.cast] + arguments, environment: ["XDG_CONFIG_HOME": senderConfig], timeout: timeout)
    }

    /// avahi-browse's parsable output lines for resolved `_castd._tcp` services.
    private func avahiBrowse() throws -> [String] {
        try lab.run(on: .phone, ["avahi-browse", "-p", "-r", "-t", "_castd._tcp"], timeout: 20).stdout
            .split(separator: "\n").map(String.init).filter { $0.hasPrefix("=") }
    }

    func testSenderFindsReceiverAndReachesItOverTLS() throws {
        let (daemon, port) = try startReceiver()
        XCTAssertNotNil(daemon.waitForLine(containing: "advertised as \"Living Room\""), "\(daemon.output)")

        // The real avahi-browse sees the service with its TXT keys.
        let resolved = try avahiBrowse()
        let line = try XCTUnwrap(resolved.first { $0.contains("Living\\032Room") }, "avahi-browse: \(resolved)")
        for key in ["\"v=1\"", "\"fn=Living Room\"", "\"auth=none\"", "\"ft=0x", "\"id="] {
            XCTAssertTrue(line.contains(key), "\(key) missing in \(line)")
        }
        XCTAssertTrue(line.contains(";\(port);"), line)

        // cast list: table and JSON.
        let table = try cast(["list"])
        XCTAssertEqual(table.status, 0, table.stderr)
        XCTAssertTrue(table.stdout.contains("Living Room"), table.stdout)
        XCTAssertTrue(table.stdout.contains("\(lab.address(.box)):\(port)"), table.stdout)
        let json = try cast(["list", "--json"])
        let list = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        XCTAssertEqual(list.count, 1)
        let entry = try XCTUnwrap(list.first)
        XCTAssertEqual(entry["name"] as? String, "Living Room")
        XCTAssertEqual(entry["port"] as? Int, Int(port))
        let txt = try XCTUnwrap(entry["txt"] as? [String: String])
        XCTAssertEqual(Set(txt.keys), ["v", "id", "fn", "ft", "auth"])
        let id = try XCTUnwrap(txt["id"])
        XCTAssertEqual(id.count, 32)

        // cast status by name (other case), by id, by id prefix and by HOST:PORT.
        for query in ["living room", "LIVING ROOM", id, String(id.prefix(6)), "\(lab.address(.box)):\(port)"] {
            let status = try cast(["status", query])
            XCTAssertEqual(status.status, 0, "\(query): \(status.stderr)")
            XCTAssertTrue(status.stdout.contains("state: stopped"), "\(query): \(status.stdout)")
            XCTAssertTrue(status.stdout.contains("tls: TLSv1.3"), "\(query): \(status.stdout)")
            XCTAssertTrue(status.stdout.contains("id: \(id)"), "\(query): \(status.stdout)")
        }
        let statusJSON = try cast(["status", "Living Room", "--json"])
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(statusJSON.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(object["state"] as? String, "stopped")
        XCTAssertEqual(object["name"] as? String, "Living Room")
        XCTAssertTrue(daemon.isRunning)
    }

    func testUnknownNameExits3AndNamesWhatIsInSight() throws {
        let (daemon, _) = try startReceiver()
        XCTAssertNotNil(daemon.waitForLine(containing: "advertised as"))
        let result = try cast(["status", "Garage"])
        XCTAssertEqual(result.status, 3, result.stderr)
        XCTAssertTrue(result.stderr.contains("no receiver named \"Garage\""), result.stderr)
        XCTAssertTrue(result.stderr.contains("\"Living Room\""), result.stderr)
    }

    func testReceiverIsAdvertisedAgainAfterAvahiRestarts() throws {
        let (daemon, _) = try startReceiver(name: "Kitchen")
        XCTAssertNotNil(daemon.waitForLine(containing: "advertised as \"Kitchen\""))
        // Follow the phone's browse as it happens rather than polling `avahi-browse -t`: `-t` waits
        // for every resolver, and one stuck on a record of the old daemon can hold it for 20 s.
        // The service must go (the old daemon's goodbye) and come back (castd's new entry group),
        // so a stale cache entry cannot pass for a re-advertisement.
        let browse = try lab.start(on: .phone, ["avahi-browse", "-p", "-r", "_castd._tcp"])
        defer { browse.stop() }
        func isKitchen(_ mark: String) -> (String) -> Bool { { $0.hasPrefix(mark) && $0.contains(";Kitchen;") } }
        XCTAssertNotNil(browse.waitForLine(timeout: 10, where: isKitchen("=")), "\(browse.output)")
        let before = daemon.output.count
        try lab.control("avahi-restart", .box)
        let restarted = Date()
        XCTAssertNotNil(browse.waitForLine(timeout: 5, where: isKitchen("-")), "no goodbye: \(browse.output)")
        let gone = browse.output.count
        let resolved = browse.waitForLine(timeout: 5, after: gone, where: isKitchen("="))
        let seconds = Date().timeIntervalSince(restarted)
        XCTAssertNotNil(resolved, "not re-advertised within 5 s: \(daemon.output)\nbrowse: \(browse.output)")
        XCTAssertNotNil(daemon.waitForLine(containing: "advertised as \"Kitchen\"", timeout: 1, after: before))
        print("re-advertised \(String(format: "%.2f", seconds)) s after avahi-daemon restarted")
    }

    func testNameConflictTakesAnAlternativeName() throws {
        let (first, _) = try startReceiver(name: "Twin")
        XCTAssertNotNil(first.waitForLine(containing: "advertised as \"Twin\""))
        let otherState = NSTemporaryDirectory() + "castd-state-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: otherState) }
        let second = try lab.start(
            on: .phone,
            [
                Paths.castd, "--name", "Twin", "--auth", "none", "--port", "0", "--video-out", "none", "--state-dir",
                otherState,
            ])
        let renamed = try XCTUnwrap(second.waitForLine(containing: "is taken", timeout: 15), "\(second.output)")
        XCTAssertTrue(renamed.contains("advertised as \"Twin #2\""), renamed)
    }

    func testWithoutAvahiBothProgramsSaySoAndKeepWorking() throws {
        try lab.control("avahi-stop", .box)
        try lab.control("avahi-stop", .phone)
        let (daemon, port) = try startReceiver(name: "Offline")
        let warning = try XCTUnwrap(daemon.waitForLine(containing: "not advertised"), "\(daemon.output)")
        XCTAssertTrue(warning.contains("--to HOST:\(port)"), warning)

        let list = try cast(["list"], timeout: 10)
        XCTAssertEqual(list.status, 3, list.stderr)
        XCTAssertTrue(list.stderr.contains("avahi-daemon"), list.stderr)
        XCTAssertLessThan(list.seconds, 5)

        let status = try cast(["status", "\(lab.address(.box)):\(port)"])
        XCTAssertEqual(status.status, 0, status.stderr)
        XCTAssertTrue(status.stdout.contains("state: stopped"))
    }

    func testPairingModesDoNotAdmitAnUnknownSender() throws {
        let (daemon, port) = try startReceiver(name: "Locked", auth: "pin")
        let result = try cast(["status", "\(lab.address(.box)):\(port)"])
        XCTAssertEqual(result.status, 4, result.stderr)
        XCTAssertTrue(result.stderr.contains("pairing"), result.stderr)
        XCTAssertNotNil(daemon.waitForLine(containing: "pairingRequired"))
    }
}
