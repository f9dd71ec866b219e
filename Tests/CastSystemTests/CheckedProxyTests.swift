import CastTestSupport
import Foundation
import Synchronization
import XCTest

@testable import CastSystem

/// The proxy that AirPlay clients' URLs are fetched through: where strangers may connect, checked on the address
/// actually connected to; what a paired sender's URL may reach stays open.
final class CheckedProxyTests: XCTestCase {
    func testStrangersMayNotReachLoopbackLinkLocalMulticastUnspecifiedOrOwnAddresses() throws {
        let own: Set<IPAddress> = [try XCTUnwrap(IPAddress("10.77.1.1"))]
        let refused = [
            "127.0.0.1", "127.255.0.9", "::1", "::ffff:127.0.0.1", "0.0.0.0", "0.1.2.3", "::", "169.254.169.254",
            "fe80::1", "febf::1", "224.0.0.251", "239.255.255.250", "255.255.255.255", "ff02::fb", "10.77.1.1",
            "::ffff:10.77.1.1",
        ]
        for text in refused {
            let address = try XCTUnwrap(IPAddress(text), text)
            XCTAssertNotNil(AddressPolicy.strangers.refusal(of: address, own: own), text)
            XCTAssertNil(AddressPolicy.any.refusal(of: address, own: own), text)
        }
        for text in ["10.77.1.2", "192.168.1.20", "8.8.8.8", "2001:db8::1", "fd00::5", "fec0::1", "169.253.1.1"] {
            XCTAssertNil(AddressPolicy.strangers.refusal(of: try XCTUnwrap(IPAddress(text), text), own: own), text)
        }
        XCTAssertTrue(IPAddress.interfaceAddresses().contains(try XCTUnwrap(IPAddress("127.0.0.1"))))
        XCTAssertEqual(IPAddress("::ffff:10.0.0.1")?.description, "10.0.0.1")
    }

    func testTargetsOfProxyRequests() {
        func target(_ line: String) -> String? {
            CheckedProxy.target(ofHead: ArraySlice(Array((line + "\r\nHost: x\r\n\r\n").utf8))).map {
                "\($0.host) \($0.port) \($0.tunnel)"
            }
        }
        XCTAssertEqual(target("CONNECT media.example:443 HTTP/1.1"), "media.example 443 true")
        XCTAssertEqual(target("CONNECT [fe80::1]:8443 HTTP/1.1"), "fe80::1 8443 true")
        XCTAssertEqual(target("GET http://10.77.1.2:8000/clip.mp4 HTTP/1.1"), "10.77.1.2 8000 false")
        XCTAssertEqual(target("GET HTTP://user:pw@127.0.0.1/x?y HTTP/1.1"), "127.0.0.1 80 false")
        XCTAssertEqual(target("GET http://[::1]/ HTTP/1.1"), "::1 80 false")
        XCTAssertEqual(target("GET http://a@b@host:81 HTTP/1.1"), "host 81 false")
        XCTAssertNil(target("CONNECT media.example HTTP/1.1"), "a tunnel needs a port")
        XCTAssertNil(target("GET /clip.mp4 HTTP/1.1"), "origin form")
        XCTAssertNil(target("GET https://host/ HTTP/1.1"))
        XCTAssertNil(target("GET http://host:0/ HTTP/1.1"))
        XCTAssertNil(target("GET http://host:99999/ HTTP/1.1"))
        XCTAssertNil(target("GET http:///x HTTP/1.1"))
        XCTAssertNil(target("garbage"))
    }

    /// A listener on loopback sees nothing of a stranger's request for it, by address or by a name that resolves there;
    /// with the policy for paired senders, the same tunnel works both ways.
    func testLoopbackIsRefusedToStrangersAndTunnelledForAny() throws {
        let listener = try TCP.listen(host: "127.0.0.1", port: 0)
        defer { close(listener.fd) }
        let refusals = Mutex<[String]>([])
        let strangers = try CheckedProxy(policy: .strangers) { refusal in refusals.withLock { $0.append(refusal) } }
        defer { strangers.stop() }
        for request in [
            "CONNECT 127.0.0.1:\(listener.port) HTTP/1.1\r\n\r\n",
            "GET http://localhost:\(listener.port)/ HTTP/1.1\r\nHost: localhost\r\n\r\n",
            "GET http://[::ffff:127.0.0.1]:\(listener.port)/ HTTP/1.1\r\n\r\n",
        ] {
            XCTAssertTrue(try exchange(request, through: strangers).hasPrefix("HTTP/1.1 403 "), request)
        }
        XCTAssertTrue(try exchange("GET /x HTTP/1.1\r\n\r\n", through: strangers).hasPrefix("HTTP/1.1 400 "))
        var pending = pollfd(fd: listener.fd, events: Int16(POLLIN), revents: 0)
        XCTAssertEqual(poll(&pending, 1, 200), 0, "the listener saw a connection")
        XCTAssertEqual(refusals.withLock { $0.count }, 3)
        XCTAssertTrue(refusals.withLock { $0[0] }.contains("loopback"), refusals.withLock { $0[0] })

        let any = try CheckedProxy(policy: .any)
        defer { any.stop() }
        let server = Background {
            let (fd, _) = try TCP.accept(listener.fd)
            let stream = TCPStream(fd: fd)
            defer { stream.close() }
            let asked = try stream.read(maxCount: 100, timeout: .seconds(5))
            try stream.write(Array("echo ".utf8) + asked, timeout: .seconds(5))
        }
        let client = TCPStream(fd: try TCP.connect(host: "127.0.0.1", port: any.port, timeout: .seconds(5)))
        defer { client.close() }
        try client.write(Array("CONNECT 127.0.0.1:\(listener.port) HTTP/1.1\r\n\r\nping".utf8), timeout: .seconds(5))
        var answer: [UInt8] = []
        while !String(decoding: answer, as: UTF8.self).hasSuffix("echo ping") {
            let bytes = try client.read(maxCount: 1000, timeout: .seconds(5))
            if bytes.isEmpty { break }
            answer += bytes
        }
        try server.value()
        XCTAssertEqual(String(decoding: answer, as: UTF8.self), "HTTP/1.1 200 Connection established\r\n\r\necho ping")
    }

    /// Sends `request` to `proxy` and returns all it answers until it closes.
    private func exchange(_ request: String, through proxy: CheckedProxy) throws -> String {
        let client = TCPStream(fd: try TCP.connect(host: "127.0.0.1", port: proxy.port, timeout: .seconds(5)))
        defer { client.close() }
        try client.write(Array(request.utf8), timeout: .seconds(5))
        var answer: [UInt8] = []
        while true {
            let bytes = try client.read(maxCount: 1000, timeout: .seconds(15))
            if bytes.isEmpty { break }
            answer += bytes
        }
        return String(decoding: answer, as: UTF8.self)
    }
}
