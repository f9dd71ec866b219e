import CastTestSupport
import XCTest

@testable import CastSystem

/// What the checking proxy sends an origin server for FFmpeg's absolute-form requests: the origin form every server
/// understands (issue #29: Python's http.server answered 404 to the absolute form), one origin per connection, no body.
final class ProxiedRequestsTests: XCTestCase {
    private func passed(_ text: String, host: String = "10.77.1.2", port: UInt16 = 8765) throws -> String {
        var requests = ProxiedRequests(host: host, port: port)
        return String(decoding: try requests.feed(Array(text.utf8)), as: UTF8.self)
    }

    func testAbsoluteFormBecomesOriginFormWithHostKept() throws {
        XCTAssertEqual(
            try passed(
                "GET http://10.77.1.2:8765/clip.mp4?x=1#frag HTTP/1.1\r\nHost: 10.77.1.2:8765\r\nRange: bytes=0-\r\n\r\n"
            ),
            "GET /clip.mp4?x=1 HTTP/1.1\r\nHost: 10.77.1.2:8765\r\nRange: bytes=0-\r\n\r\n")
        XCTAssertEqual(
            try passed("HEAD http://Media.Example?q HTTP/1.0\r\n\r\n", host: "media.example", port: 80),
            "HEAD /?q HTTP/1.0\r\nHost: media.example\r\n\r\n")
        XCTAssertEqual(
            try passed("GET http://[fd00::5]:81 HTTP/1.1\r\n\r\n", host: "fd00::5", port: 81),
            "GET / HTTP/1.1\r\nHost: [fd00::5]:81\r\n\r\n")
    }

    func testProxyHeadersStayWithTheProxy() throws {
        XCTAssertEqual(
            try passed(
                "GET http://10.77.1.2:8765/a HTTP/1.1\r\nProxy-Connection: keep-alive\r\nproxy-authorization: Basic eA==\r\n"
                    + "Authorization: Basic dTpw\r\nHost: 10.77.1.2:8765\r\n\r\n"),
            "GET /a HTTP/1.1\r\nAuthorization: Basic dTpw\r\nHost: 10.77.1.2:8765\r\n\r\n")
    }

    /// A kept-alive connection carries several requests, in pieces; each is rewritten once it is whole.
    func testRequestsInPiecesAndInARow() throws {
        var requests = ProxiedRequests(host: "10.77.1.2", port: 8765)
        let first = "GET http://10.77.1.2:8765/a HTTP/1.1\r\nHost: h\r\n\r\n"
        let second = "GET http://10.77.1.2:8765/b HTTP/1.1\r\nHost: h\r\n\r\n"
        var out: [UInt8] = []
        for byte in Array((first + second).utf8) { out += try requests.feed([byte]) }
        XCTAssertEqual(
            String(decoding: out, as: UTF8.self), "GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n"
        )
    }

    func testRefusals() {
        for (request, why) in [
            ("GET http://10.77.1.3:8765/ HTTP/1.1\r\n\r\n", "another host"),
            ("GET http://10.77.1.2:8766/ HTTP/1.1\r\n\r\n", "another port"),
            ("GET /clip.mp4 HTTP/1.1\r\n\r\n", "origin form from the client"),
            ("POST http://10.77.1.2:8765/ HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", "a method with a body"),
            ("GET http://10.77.1.2:8765/ HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", "a body"),
            ("GET http://10.77.1.2:8765/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "a chunked body"),
            ("CONNECT 10.77.1.2:8765 HTTP/1.1\r\n\r\n", "a tunnel inside plain http"),
            ("GET http://10.77.1.2:8765/ SPDY/3\r\n\r\n", "not HTTP/1"),
        ] {
            var requests = ProxiedRequests(host: "10.77.1.2", port: 8765)
            XCTAssertThrowsError(try requests.feed(Array(request.utf8)), why)
        }
        var requests = ProxiedRequests(host: "10.77.1.2", port: 8765)
        XCTAssertThrowsError(try requests.feed([UInt8](repeating: 0x41, count: ProxiedRequests.headLimit + 1)))
    }

    /// Through a real proxy to a real server on loopback (policy `any`): what the server reads is the origin form.
    func testTheServerReadsTheOriginForm() throws {
        let listener = try TCP.listen(host: "127.0.0.1", port: 0)
        defer { close(listener.fd) }
        let proxy = try CheckedProxy(policy: .any)
        defer { proxy.stop() }
        let server = Background { () throws -> String in
            let (fd, _) = try TCP.accept(listener.fd)
            let stream = TCPStream(fd: fd)
            defer { stream.close() }
            var head: [UInt8] = []
            while CheckedProxy.endOfHead(head, from: 0) == nil {
                let bytes = try stream.read(maxCount: 1000, timeout: .seconds(5))
                if bytes.isEmpty { break }
                head += bytes
            }
            try stream.write(Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8), timeout: .seconds(5))
            return String(decoding: head, as: UTF8.self)
        }
        let client = TCPStream(fd: try TCP.connect(host: "127.0.0.1", port: proxy.port, timeout: .seconds(5)))
        defer { client.close() }
        try client.write(
            Array("GET http://127.0.0.1:\(listener.port)/clip.mp4 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8),
            timeout: .seconds(5))
        var answer: [UInt8] = []
        while !String(decoding: answer, as: UTF8.self).hasSuffix("ok") {
            let bytes = try client.read(maxCount: 1000, timeout: .seconds(5))
            if bytes.isEmpty { break }
            answer += bytes
        }
        XCTAssertEqual(try server.value(), "GET /clip.mp4 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        XCTAssertTrue(String(decoding: answer, as: UTF8.self).hasPrefix("HTTP/1.1 200 OK"))
    }
}
