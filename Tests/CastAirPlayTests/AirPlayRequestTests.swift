import Foundation
import XCTest

@testable import CastAirPlay

final class AirPlayRequestTests: XCTestCase {
    private enum Fixtures {
        static let url = "http://10.77.1.2:8000/clip.mp4"

        /// A `/play` body as pyatv 0.18.0 builds it (`airplayv1.py`): a binary plist with an integer position.
        static func pyatvBody(url: String = url, position: Any = 0) throws -> [UInt8] {
            let body: [String: Any] = [
                "Content-Location": url, "Start-Position": position,
                "X-Apple-Session-ID": "9F3E5C2A-0000-4000-8000-000000000001",
            ]
            return Array(try PropertyListSerialization.data(fromPropertyList: body, format: .binary, options: 0))
        }

        /// A POST; a `/play` says its body is a binary plist unless `headers` name another type.
        static func post(_ path: String, body: [UInt8] = [], headers: [(name: String, value: String)] = [])
            -> HTTPRequest
        {
            var headers = headers
            if path == "/play", !headers.contains(where: { $0.name == "Content-Type" }) {
                headers.append(("Content-Type", "application/x-apple-binary-plist"))
            }
            var request = HTTPRequest(method: "POST", path: path, headers: headers, body: body)
            if let mark = path.firstIndex(of: "?") {
                request.path = String(path[..<mark])
                for pair in path[path.index(after: mark)...].split(separator: "&") {
                    let parts = pair.split(separator: "=", maxSplits: 1)
                    request.query[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
                }
            }
            return request
        }
    }

    private func assertRefused(_ request: HTTPRequest, _ status: HTTPStatus, line: UInt = #line) {
        XCTAssertThrowsError(try AirPlayRequest(request), line: line) { error in
            XCTAssertEqual((error as? HTTPRequestError)?.status, status, "\(error)", line: line)
        }
    }

    func testBinaryPlistPlayAsPyatvSendsIt() throws {
        let request = try AirPlayRequest(Fixtures.post("/play", body: Fixtures.pyatvBody()))
        XCTAssertEqual(
            request,
            .play(
                AirPlayPlayRequest(
                    url: Fixtures.url, start: .fraction(0), sessionID: "9F3E5C2A-0000-4000-8000-000000000001")))
    }

    func testXMLPlistAndTextParameters() throws {
        let xml = Array(
            try PropertyListSerialization.data(
                fromPropertyList: ["Content-Location": Fixtures.url, "Start-Position": 0.25], format: .xml, options: 0))
        XCTAssertEqual(
            try AirPlayRequest(Fixtures.post("/play", body: xml)),
            .play(AirPlayPlayRequest(url: Fixtures.url, start: .fraction(0.25))))

        let text = Array("Content-Location: \(Fixtures.url)\r\nStart-Position: 0.5\r\n".utf8)
        XCTAssertEqual(
            try AirPlayRequest(Fixtures.post("/play", body: text, headers: [("X-Apple-Session-ID", "abc")])),
            .play(AirPlayPlayRequest(url: Fixtures.url, start: .fraction(0.5), sessionID: "abc")))

        let seconds = Array(
            try PropertyListSerialization.data(
                fromPropertyList: ["Content-Location": Fixtures.url, "Start-Position-Seconds": 12], format: .binary,
                options: 0))
        XCTAssertEqual(
            try AirPlayRequest(Fixtures.post("/play", body: seconds)),
            .play(AirPlayPlayRequest(url: Fixtures.url, start: .seconds(12))))
    }

    func testPlayRefusesWhatTheEngineMustNotOpen() throws {
        for url in ["file:///etc/passwd", "rtsp://10.0.0.1/x", "http://user:pw@host/x", "http://", "concat:a|b"] {
            assertRefused(Fixtures.post("/play", body: try Fixtures.pyatvBody(url: url)), .badRequest)
        }
        assertRefused(Fixtures.post("/play", body: try Fixtures.pyatvBody(position: 1.5)), .badRequest)
        assertRefused(Fixtures.post("/play", body: try Fixtures.pyatvBody(position: "x")), .badRequest)
        assertRefused(Fixtures.post("/play", body: Array("bplist00 truncated".utf8)), .badRequest)
        assertRefused(Fixtures.post("/play", body: []), .badRequest)
        assertRefused(Fixtures.post("/play", body: [0xFF, 0xFE, 0x00]), .unsupportedMediaType)
        assertRefused(Fixtures.post("/play", body: Array("just words".utf8)), .unsupportedMediaType)
        // A plist whose top level is not a dictionary.
        let array = Array(
            try PropertyListSerialization.data(fromPropertyList: [Fixtures.url], format: .binary, options: 0))
        assertRefused(Fixtures.post("/play", body: array), .badRequest)
    }

    func testControlRoutes() throws {
        XCTAssertEqual(try AirPlayRequest(Fixtures.post("/rate?value=0")), .rate(0))
        XCTAssertEqual(try AirPlayRequest(Fixtures.post("/rate?value=1.000000")), .rate(1))
        XCTAssertEqual(try AirPlayRequest(Fixtures.post("/scrub?position=20.097000")), .seek(20.097))
        XCTAssertEqual(try AirPlayRequest(Fixtures.post("/stop")), .stop)
        XCTAssertEqual(try AirPlayRequest(HTTPRequest(method: "GET", path: "/scrub")), .scrubInfo)
        XCTAssertEqual(try AirPlayRequest(HTTPRequest(method: "GET", path: "/playback-info")), .playbackInfo)
        XCTAssertEqual(try AirPlayRequest(HTTPRequest(method: "GET", path: "/server-info")), .serverInfo)
        assertRefused(Fixtures.post("/rate"), .badRequest)
        assertRefused(Fixtures.post("/rate?value=7"), .badRequest)
        assertRefused(Fixtures.post("/rate?value=nan"), .badRequest)
        assertRefused(Fixtures.post("/scrub?position=-1"), .badRequest)
        assertRefused(Fixtures.post("/scrub?position=inf"), .badRequest)
    }

    func testUnknownRouteIs404AndWrongMethodIs405() {
        assertRefused(HTTPRequest(method: "PUT", path: "/slideshows/1"), .notFound)
        assertRefused(HTTPRequest(method: "POST", path: "/photo"), .methodNotAllowed)
        assertRefused(HTTPRequest(method: "GET", path: "/play"), .methodNotAllowed)
        assertRefused(HTTPRequest(method: "GET", path: "/reverse"), .methodNotAllowed)
        assertRefused(HTTPRequest(method: "DELETE", path: "/stop"), .methodNotAllowed)
    }

    /// A /play without an AirPlay Content-Type is refused: a web page can POST text/plain, form data or multipart to
    /// castd from a browser without a CORS preflight, but none of the AirPlay types.
    func testPlayNeedsAnAirPlayContentType() throws {
        let body = Array("Content-Location: \(Fixtures.url)\nStart-Position: 0\n".utf8)
        var bare = Fixtures.post("/play", body: body)
        bare.headers.removeAll()
        assertRefused(bare, .unsupportedMediaType)
        for type in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""] {
            assertRefused(Fixtures.post("/play", body: body, headers: [("Content-Type", type)]), .unsupportedMediaType)
        }
        for type in ["text/parameters", "Text/Parameters; charset=utf-8", "application/x-apple-binary-plist"] {
            XCTAssertEqual(
                try AirPlayRequest(Fixtures.post("/play", body: body, headers: [("Content-Type", type)])),
                .play(AirPlayPlayRequest(url: Fixtures.url, start: .fraction(0))), type)
        }
    }
}
