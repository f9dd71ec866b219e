import XCTest

@testable import CastSender

final class ReceiverQueryTests: XCTestCase {
    private enum Fixtures {
        static let living = ReceiverDescription(name: "Living Room", id: "a1b2c3d4", host: "10.0.0.1", port: 7100)
        static let kitchen = ReceiverDescription(name: "Kitchen", id: "a1ffee00", host: "10.0.0.2", port: 7100)
        static let all = [living, kitchen]
    }

    func testAddressesNeedNoDiscovery() {
        XCTAssertEqual(ReceiverQuery("10.77.1.1:7100"), .address(host: "10.77.1.1", port: 7100))
        XCTAssertEqual(ReceiverQuery("box.local:9"), .address(host: "box.local", port: 9))
        XCTAssertEqual(ReceiverQuery("[fe80::1]:7100"), .address(host: "fe80::1", port: 7100))
        XCTAssertEqual(ReceiverQuery("Living Room"), .name("Living Room"))
        XCTAssertEqual(ReceiverQuery("host:notaport"), .name("host:notaport"))
        XCTAssertEqual(ReceiverQuery("host:0"), .name("host:0"))
        XCTAssertEqual(ReceiverQuery(":7100"), .name(":7100"))
        XCTAssertEqual(ReceiverQuery("[]:5"), .name("[]:5"), "found by ReceiverQueryFuzz: no empty host")
    }

    func testNameIsMatchedCaseInsensitively() throws {
        XCTAssertEqual(try ReceiverQuery.match("living room", in: Fixtures.all), Fixtures.living)
        XCTAssertEqual(try ReceiverQuery.match("KITCHEN", in: Fixtures.all), Fixtures.kitchen)
    }

    func testIdThenUniquePrefix() throws {
        XCTAssertEqual(try ReceiverQuery.match("a1ffee00", in: Fixtures.all), Fixtures.kitchen)
        XCTAssertEqual(try ReceiverQuery.match("liv", in: Fixtures.all), Fixtures.living)
        XCTAssertEqual(try ReceiverQuery.match("a1b", in: Fixtures.all), Fixtures.living)
    }

    func testAmbiguousAndUnknownNamesSayWhatIsInSight() {
        XCTAssertThrowsError(try ReceiverQuery.match("a1", in: Fixtures.all)) { error in
            let error = error as! CastError
            XCTAssertEqual(error.kind, .noSuchReceiver)
            XCTAssertTrue(error.message.contains("several"), error.message)
        }
        XCTAssertThrowsError(try ReceiverQuery.match("garage", in: Fixtures.all)) { error in
            let error = error as! CastError
            XCTAssertEqual(error.kind, .noSuchReceiver)
            XCTAssertEqual(error.message, #"no receiver named "garage"; receivers in sight: "Kitchen", "Living Room""#)
        }
    }

    func testNamesFromTheNetworkAreShownEscaped() {
        let forged = ReceiverDescription(name: "evil\nPairing PIN: 1234\u{1B}[2J", id: "", host: "10.0.0.3", port: 7100)
        XCTAssertThrowsError(try ReceiverQuery.match("garage", in: [forged])) { error in
            let message = (error as! CastError).message
            XCTAssertFalse(message.contains("\n") || message.contains("\u{1B}"), message)
            XCTAssertTrue(message.contains(#""evil\nPairing PIN: 1234\u{1B}[2J""#), message)
        }
        // The impersonation warning keeps its own lines, and only those.
        let warning = identityMismatch("Living\nRoom\u{1B}", announced: "aa", presented: "bb", because: "\"x\ny\"")
        XCTAssertEqual(warning.split(separator: "\n").count, 5, warning)
        XCTAssertFalse(warning.contains("\u{1B}"), warning)
    }

    func testWithoutQueryTheOnlyReceiverIsChosen() throws {
        XCTAssertEqual(try ReceiverQuery.match(nil, in: [Fixtures.kitchen]), Fixtures.kitchen)
        XCTAssertThrowsError(try ReceiverQuery.match(nil, in: Fixtures.all))
        XCTAssertThrowsError(try ReceiverQuery.match(nil, in: [])) { error in
            XCTAssertTrue((error as! CastError).message.contains("no receivers are in sight"))
        }
    }
}
