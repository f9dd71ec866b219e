import CastSender
import Foundation
import XCTest

/// The user name and password a URL carries (`cast send http://USER:PASS@host/…`), taken out of it and
/// percent-decoded as Foundation's `removingPercentEncoding` decodes them.
final class CredentialsTests: XCTestCase {
    func testCredentialsAreTakenOutAndDecoded() {
        let split = RemotePlayback.splitCredentials("http://alice:s3cr%3At%40pw@host:8080/a/b.mp4?x=1")
        XCTAssertEqual(split.url, "http://host:8080/a/b.mp4?x=1")
        XCTAssertEqual(split.username, "alice")
        XCTAssertEqual(split.password, "s3cr:t@pw")
        XCTAssertEqual(
            RemotePlayback.splitCredentials("https://host/x@y").username, nil, "an @ in the path is not userinfo")
        XCTAssertEqual(RemotePlayback.splitCredentials("https://bob@host/").password, nil)
    }

    func testDecodingAgreesWithFoundation() {
        for text in ["plain", "%41%62", "caf%C3%A9", "%zz", "%4", "100%", "%C3", "%e2%82%ac", "a+b%20c"] {
            let split = RemotePlayback.splitCredentials("http://\(text)@host/")
            XCTAssertEqual(split.username, text.removingPercentEncoding ?? text, text)
        }
    }
}
