import CastAirPlay
import XCTest

/// The `Host` rule of the AirPlay server (issue #29, DNS rebinding): the connection's own address or the box's names.
final class AirPlayHostTests: XCTestCase {
    private let hosts = AirPlayHost(hostName: "Box")

    func testTheConnectionsAddressAndTheBoxsNamesAreAccepted() {
        for (host, local) in [
            ("10.0.0.2:7000", "10.0.0.2:7000"), ("10.0.0.2", "10.0.0.2:7000"), ("[fe80::1]:7000", "[fe80::1]:7000"),
            ("box", "10.0.0.2:7000"), ("BOX.local:7000", "10.0.0.2:7000"), ("box.local.", "10.0.0.2:7000"),
            ("localhost:7000", "127.0.0.1:7000"), ("localhost", "[::1]:7000"),
        ] {
            XCTAssertTrue(hosts.accepts(host, localAddress: local), "\(host) on \(local)")
        }
        XCTAssertTrue(hosts.accepts(nil, localAddress: "10.0.0.2:7000"), "HTTP/1.0 without Host")
    }

    func testOtherNamesAndAddressesAreRefused() {
        for (host, local) in [
            ("evil.example", "10.0.0.2:7000"), ("evil.example:7000", "10.0.0.2:7000"),
            ("10.0.0.3:7000", "10.0.0.2:7000"),
            ("localhost", "10.0.0.2:7000"), ("", "10.0.0.2:7000"), ("box.evil.example", "10.0.0.2:7000"),
            ("[fe80::2]", "[fe80::1]:7000"), ("10.0.0.2.evil.example", "10.0.0.2:7000"),
        ] {
            XCTAssertFalse(hosts.accepts(host, localAddress: local), "\(host) on \(local)")
        }
        XCTAssertFalse(hosts.accepts("10.0.0.2", localAddress: nil), "no address known: only the names")
    }
}
