import CastDiscovery
import XCTest

@testable import CastReceiver

/// What castd's log says of its advertisements, without avahi: each event of each service.
final class AdvertisementsTests: XCTestCase {
    /// The Cast service's lines name the service type, and where it is not advertised, how senders still reach it.
    func testTheCastServicesLinesSayHowToConnectWithoutIt() {
        let line = { Advertisements.logLine(for: $0, of: .cast, port: 7000) }
        XCTAssertEqual(line(.published(name: "Den")).0, .info)
        XCTAssertEqual(line(.published(name: "Den")).1, "advertised as \"Den\" (_castd._tcp) on mDNS")
        XCTAssertEqual(line(.renamed(from: "Den", to: "Den #2")).0, .warning)
        XCTAssertEqual(
            line(.renamed(from: "Den", to: "Den #2")).1,
            "the name \"Den\" is taken on this network; advertised as \"Den #2\" instead")
        XCTAssertEqual(line(.daemonUnavailable("no daemon")).0, .warning)
        XCTAssertEqual(
            line(.daemonUnavailable("no daemon")).1,
            "not advertised: no daemon; senders can still connect with --to HOST:7000")
        XCTAssertEqual(line(.failed("bad name")).0, .error)
        XCTAssertEqual(
            line(.failed("bad name")).1, "advertising failed: bad name; senders can still connect with --to HOST:7000")
    }

    /// The AirPlay service's lines say AirPlay, and name its own service type.
    func testTheAirPlayServicesLinesSayAirPlay() {
        let line = { Advertisements.logLine(for: $0, of: .airPlay, port: 7100) }
        XCTAssertEqual(line(.published(name: "Den")).1, "advertised as \"Den\" (_airplay._tcp) on mDNS")
        XCTAssertEqual(
            line(.renamed(from: "Den", to: "Den #2")).1,
            "the AirPlay name \"Den\" is taken on this network; advertised as \"Den #2\" instead")
        XCTAssertEqual(line(.daemonUnavailable("no daemon")).0, .warning)
        XCTAssertEqual(line(.daemonUnavailable("no daemon")).1, "AirPlay video not advertised: no daemon")
        XCTAssertEqual(line(.failed("bad name")).0, .error)
        XCTAssertEqual(line(.failed("bad name")).1, "advertising AirPlay video failed: bad name")
    }

    /// After `stop` nothing is advertised any more, whatever asks (a rename, a late start): no avahi is reached.
    func testNothingIsAdvertisedAfterStop() {
        let advertisements = Advertisements(logger: Logger { _, _ in })
        advertisements.stop()
        advertisements.advertise(.cast, name: "Den", port: 7000, txt: [:])
        advertisements.rename(to: "Study", castTXT: [:])
        XCTAssertTrue(advertisements.services.isEmpty)
    }
}
