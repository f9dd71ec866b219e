import XCTest

@testable import CastDiscovery

/// avahi-client is opened on first use, not linked: a library that is not there is an error to report, not a crash.
/// No lab: these tests load libraries and talk to no daemon.
final class AvahiTests: XCTestCase {
    func testALibraryThatIsNotInstalledIsReportedAsMissing() {
        XCTAssertThrowsError(try Avahi.load(named: Fixtures.missingLibrary)) { error in
            XCTAssertEqual(error as? DiscoveryError, .libraryMissing)
            let message = "\(error)"
            XCTAssertTrue(
                message.hasPrefix("the avahi client library (libavahi-client.so.3) is not installed ("), message)
            XCTAssertTrue(message.contains(Fixtures.missingLibrary), "the loader's words are left out: \(message)")
            XCTAssertTrue(message.hasSuffix("): use --to HOST:PORT"), message)
        }
    }

    func testTheInstalledLibraryLoadsAndAnswers() throws {
        try Avahi.load()
        XCTAssertEqual(Avahi.message(Avahi.errorCollision), "Local name collision")
    }
}

private enum Fixtures {
    static let missingLibrary = "libcast-no-such-library.so.0"
}
