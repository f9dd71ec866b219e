import Foundation
import FoundationNetworking
import XCTest

@testable import CastKit

/// Which stored credential a URL gets: its server's protection space (host, port, protocol; any realm), never a
/// proxy's, never another port's, and none when the URL carries its own.
final class StoredCredentialsTests: XCTestCase {
    private func space(_ host: String, _ port: Int, _ scheme: String, realm: String?, proxy: Bool = false)
        -> URLProtectionSpace
    {
        proxy
            ? URLProtectionSpace(proxyHost: host, port: port, type: scheme, realm: realm, authenticationMethod: nil)
            : URLProtectionSpace(
                host: host, port: port, protocol: scheme, realm: realm,
                authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
    }

    func testTheServersSpaceOfAnyRealmAndNothingElse() throws {
        let storage = URLCredentialStorage.shared
        var stored: [(URLCredential, URLProtectionSpace)] = []
        func store(_ user: String, _ space: URLProtectionSpace, asDefault: Bool = false) {
            let credential = URLCredential(user: user, password: "pw-\(user)", persistence: .forSession)
            if asDefault {
                storage.setDefaultCredential(credential, for: space)
            } else {
                storage.set(credential, for: space)
            }
            stored.append((credential, space))
        }
        defer { for (credential, space) in stored { storage.remove(credential, for: space) } }
        store("proxy", space("media.test", 80, "http", realm: "a", proxy: true))
        store("other-port", space("media.test", 8080, "http", realm: "a"))
        store("tls", space("media.test", 443, "https", realm: "b"))
        XCTAssertNil(
            StoredCredentials.lookup(for: URL(string: "http://media.test/movie.mp4")!), "a proxy's or another port's")
        store("plain", space("media.test", 80, "http", realm: "films"))
        let plain = try XCTUnwrap(StoredCredentials.lookup(for: URL(string: "http://MEDIA.test/movie.mp4")!))
        XCTAssertEqual(plain.user, "plain")
        XCTAssertEqual(plain.password, "pw-plain")
        XCTAssertEqual(StoredCredentials.lookup(for: URL(string: "https://media.test/m.mp4")!)?.user, "tls")
        XCTAssertEqual(StoredCredentials.lookup(for: URL(string: "http://media.test:8080/m.mp4")!)?.user, "other-port")
        XCTAssertNil(StoredCredentials.lookup(for: URL(string: "http://eve@media.test/m.mp4")!), "the URL's own wins")
        XCTAssertNil(StoredCredentials.lookup(for: URL(fileURLWithPath: "/tmp/m.mp4")))
        // Another realm of the same server: the lowest realm is taken, whatever the storage's order.
        store("zed", space("media.test", 80, "http", realm: "series"), asDefault: true)
        for _ in 0..<5 {
            XCTAssertEqual(StoredCredentials.lookup(for: URL(string: "http://media.test/m.mp4")!)?.user, "plain")
        }
        XCTAssertEqual(
            StoredCredentials.authenticated(URL(string: "http://media.test/a%20b.mp4")!).absoluteString,
            "http://plain:pw-plain@media.test/a%20b.mp4")
    }

    /// Stored credentials go only to a receiver whose key was pinned by pairing, and over plain http only when the
    /// program opted in (issue #29): an unpaired `auth none` receiver, or anyone on a plain-http path, got them.
    func testStoredCredentialsGoOnlyToPinnedReceiversAndOverHTTPSUnlessOptedIn() {
        let https = URL(string: "https://media.test/m.mp4")!
        let http = URL(string: "http://media.test/m.mp4")!
        XCTAssertTrue(StoredCredentials.mayGo(toReceiver: true, for: https, overPlainHTTP: false))
        XCTAssertFalse(StoredCredentials.mayGo(toReceiver: false, for: https, overPlainHTTP: false), "unpaired")
        XCTAssertFalse(StoredCredentials.mayGo(toReceiver: false, for: https, overPlainHTTP: true), "unpaired")
        XCTAssertFalse(StoredCredentials.mayGo(toReceiver: true, for: http, overPlainHTTP: false), "plain http")
        XCTAssertTrue(StoredCredentials.mayGo(toReceiver: true, for: http, overPlainHTTP: true), "opted in")
        XCTAssertFalse(StoredCredentials.mayGo(toReceiver: false, for: http, overPlainHTTP: true), "unpaired")
        XCTAssertFalse(
            StoredCredentials.mayGo(toReceiver: true, for: URL(fileURLWithPath: "/m.mp4"), overPlainHTTP: true))
        XCTAssertFalse(CastKitConfiguration().storedCredentialsOverPlainHTTP, "off by default")
    }
}
