import XCTest

@testable import CastAirPlay

final class HTTPRequestParserTests: XCTestCase {
    private func parse(_ text: String, limits: HTTPRequestParser.Limits = .init()) throws(HTTPRequestError)
        -> [HTTPRequest]
    {
        var parser = HTTPRequestParser(limits: limits)
        parser.feed(Array(text.utf8))
        var requests: [HTTPRequest] = []
        while let request = try parser.nextRequest() { requests.append(request) }
        return requests
    }

    private func assertRefused(
        _ text: String, _ status: HTTPStatus, limits: HTTPRequestParser.Limits = .init(), line: UInt = #line
    ) {
        do {
            let requests = try parse(text, limits: limits)
            XCTFail("accepted: \(requests)", line: line)
        } catch {
            XCTAssertEqual(error.status, status, error.message, line: line)
        }
    }

    func testPyatvPlayRequestThenAPollOnTheSameConnection() throws {
        let body: [UInt8] = Array("bplist00-fake".utf8)
        var parser = HTTPRequestParser()
        let head =
            "POST /play HTTP/1.1\r\nUser-Agent: MediaControl/1.0\r\nContent-Length: \(body.count)\r\n"
            + "Content-Type: application/x-apple-binary-plist\r\n\r\n"
        let bytes = Array(head.utf8) + body + Array("GET /playback-info HTTP/1.1\r\nUser-Agent: pyatv\r\n\r\n".utf8)
        // Byte by byte: nothing is returned before a request is whole.
        var requests: [HTTPRequest] = []
        for byte in bytes {
            parser.feed([byte])
            while let request = try parser.nextRequest() { requests.append(request) }
        }
        XCTAssertEqual(requests.count, 2)
        XCTAssertEqual(requests[0].method, "POST")
        XCTAssertEqual(requests[0].path, "/play")
        XCTAssertEqual(requests[0].body, body)
        XCTAssertEqual(requests[0].header("content-type"), "application/x-apple-binary-plist")
        XCTAssertTrue(requests[0].keepsConnectionOpen)
        XCTAssertEqual(requests[1].path, "/playback-info")
        XCTAssertEqual(requests[1].body, [])
        XCTAssertFalse(parser.hasPartialRequest)
    }

    func testQueryIsDecodedAndLFOnlyLinesAreAccepted() throws {
        let requests = try parse("POST /scrub?position=12.5&x=a%20b+c HTTP/1.0\nConnection: keep-alive\n\n")
        XCTAssertEqual(requests.first?.query, ["position": "12.5", "x": "a b c"])
        XCTAssertEqual(requests.first?.minorVersion, 0)
        XCTAssertEqual(requests.first?.keepsConnectionOpen, true)
        XCTAssertEqual(try parse("GET /x HTTP/1.0\r\n\r\n").first?.keepsConnectionOpen, false)
        XCTAssertEqual(try parse("GET /x HTTP/1.1\r\nConnection: Close\r\n\r\n").first?.keepsConnectionOpen, false)
    }

    func testPartialRequestWaits() throws {
        var parser = HTTPRequestParser()
        parser.feed(Array("POST /play HTTP/1.1\r\nContent-Length: 10\r\n".utf8))
        XCTAssertNil(try parser.nextRequest())
        XCTAssertNil(parser.receivedBodyLength, "no head yet")
        parser.feed(Array("\r\n12345".utf8))
        XCTAssertNil(try parser.nextRequest())
        XCTAssertTrue(parser.hasPartialRequest)
        XCTAssertEqual(parser.receivedBodyLength, 5)
        parser.feed(Array("67890GET /next".utf8))
        XCTAssertEqual(try parser.nextRequest()?.body, Array("1234567890".utf8))
        XCTAssertNil(parser.receivedBodyLength, "the next request's head has not ended")
        XCTAssertTrue(parser.hasPartialRequest)
    }

    /// The request timeout grows with the body that arrived (a second per 128 KiB), never with a head: a 16 MiB
    /// picture arriving at 1 Mbit/s has 138 s, a request with no body (or none of it yet) 10 s.
    func testTheRequestTimeoutGrowsWithTheBodyThatArrived() {
        let timeout = RequestTimeout()
        XCTAssertEqual(timeout.allowed(bodyReceived: 0), .seconds(10))
        XCTAssertEqual(timeout.allowed(bodyReceived: 64 * 1024), .milliseconds(10_500))
        XCTAssertEqual(timeout.allowed(bodyReceived: 16 * 1024 * 1024), .seconds(138))
        XCTAssertEqual(
            RequestTimeout(base: .seconds(2), bodyRate: 1000).allowed(bodyReceived: 1500), .milliseconds(3500))
    }

    /// Empty lines before a request line are bytes of that request: a peer streaming CR LF makes a partial request
    /// (so the request timeout runs) and is refused at the head limit, instead of growing the buffer for ever.
    func testStreamedEmptyLinesCountTowardTheHeadLimitAndMakeAPartialRequest() {
        var parser = HTTPRequestParser()
        parser.feed(Array("\r\n\r\n".utf8))
        XCTAssertNil(try parser.nextRequest())
        XCTAssertTrue(parser.hasPartialRequest, "the request timer must start")
        var refusal: HTTPRequestError?
        var fed = 4
        while refusal == nil, fed < 1_000_000 {
            parser.feed(Array(repeating: Array("\r\n".utf8), count: 512).joined())
            fed += 1024
            do {
                let request = try parser.nextRequest()
                XCTAssertNil(request)
            } catch {
                refusal = error
            }
        }
        XCTAssertEqual(refusal?.status, .headerFieldsTooLarge)
        XCTAssertLessThanOrEqual(fed, HTTPRequestParser.Limits().head + 2048)
    }

    /// One empty line (a CR LF after a body, as some clients send) is dropped and does not count: the connection may
    /// idle after it. Empty lines still precede a request that parses.
    func testOneEmptyLineAfterARequestIsDropped() throws {
        var parser = HTTPRequestParser()
        parser.feed(Array("POST /play HTTP/1.1\r\nContent-Length: 2\r\n\r\nab\r\n".utf8))
        XCTAssertEqual(try parser.nextRequest()?.body, Array("ab".utf8))
        XCTAssertNil(try parser.nextRequest())
        XCTAssertFalse(parser.hasPartialRequest)
        parser.feed(Array("\r\n\nGET /x HTTP/1.1\r\n\r\n".utf8))
        XCTAssertEqual(try parser.nextRequest()?.path, "/x")
        XCTAssertFalse(parser.hasPartialRequest)
        XCTAssertEqual(try parse("\r\n\r\n\nGET /y HTTP/1.1\r\n\r\n").map(\.path), ["/y"])
        assertRefused(String(repeating: "\r\n", count: 9000) + "GET /z HTTP/1.1\r\n\r\n", .headerFieldsTooLarge)
    }

    func testBadRequestLines() {
        assertRefused("GARBAGE\r\n\r\n", .badRequest)
        assertRefused("GET  /x HTTP/1.1\r\n\r\n", .badRequest)
        assertRefused("get /x HTTP/1.1\r\n\r\n", .badRequest)
        assertRefused("GET x HTTP/1.1\r\n\r\n", .badRequest)
        assertRefused("GET http://example.com/ HTTP/1.1\r\n\r\n", .badRequest)
        assertRefused("GET /x HTTP/2.0\r\n\r\n", .versionNotSupported)
        assertRefused("GET /x RTSP/1.0\r\n\r\n", .badRequest)
        assertRefused("GET /x?a=%zz HTTP/1.1\r\n\r\n", .badRequest)
        assertRefused("GET /x HTTP/1.1\rX: y\r\n\r\n", .badRequest)
    }

    func testBadHeaders() {
        assertRefused("GET /x HTTP/1.1\r\nNo colon here\r\n\r\n", .badRequest)
        assertRefused("GET /x HTTP/1.1\r\nBad Name: y\r\n\r\n", .badRequest)
        assertRefused("GET /x HTTP/1.1\r\n folded: y\r\n\r\n", .badRequest)
        assertRefused("GET /x HTTP/1.1\r\nX: a\u{1}b\r\n\r\n", .badRequest)
        assertRefused("POST /x HTTP/1.1\r\nContent-Length: -1\r\n\r\n", .badRequest)
        assertRefused("POST /x HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", .badRequest)
        assertRefused("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", .notImplemented)
    }

    func testOversizeRequestLineHeadersAndBody() {
        assertRefused("GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\n\r\n", .uriTooLong)
        // Without a line end at all, the bound still holds (nothing waits for more).
        assertRefused("GET /" + String(repeating: "a", count: 9000), .uriTooLong)
        let many = (0..<65).map { "X-\($0): y\r\n" }.joined()
        assertRefused("GET /x HTTP/1.1\r\n\(many)\r\n", .headerFieldsTooLarge)
        let long = "X: " + String(repeating: "b", count: 17000)
        assertRefused("GET /x HTTP/1.1\r\n\(long)", .headerFieldsTooLarge)
        assertRefused("POST /play HTTP/1.1\r\nContent-Length: 65537\r\n\r\n", .contentTooLarge)
        assertRefused("POST /play HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", .contentTooLarge)
        XCTAssertNoThrow(try parse("POST /play HTTP/1.1\r\nContent-Length: 65536\r\n\r\n"))
    }

    func testAfterAnErrorTheParserStaysSpent() {
        var parser = HTTPRequestParser()
        parser.feed(Array("BAD\r\n\r\nGET /x HTTP/1.1\r\n\r\n".utf8))
        XCTAssertThrowsError(try parser.nextRequest())
        XCTAssertThrowsError(try parser.nextRequest())
    }

    func testResponseAlwaysHasContentLength() {
        let response = HTTPResponse.text(.ok, "duration: 1.000000\nposition: 0.000000")
        let text = String(decoding: response.encoded(), as: UTF8.self)
        XCTAssertTrue(text.hasPrefix("HTTP/1.1 200 OK\r\n"), text)
        XCTAssertTrue(text.contains("Content-Length: 38\r\n"), text)
        XCTAssertTrue(text.hasSuffix("\r\n\r\nduration: 1.000000\nposition: 0.000000\n"), text)
        let empty = String(decoding: HTTPResponse(status: .ok).encoded(closing: true), as: UTF8.self)
        XCTAssertEqual(empty, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    }
}
