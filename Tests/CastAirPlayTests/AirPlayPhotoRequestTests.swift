import Foundation
import XCTest

@testable import CastAirPlay

final class AirPlayPhotoRequestTests: XCTestCase {
    private enum Fixtures {
        static let sessionID = "9F3E5C2A-0000-4000-8000-00000000F070"
        /// The first bytes of a JPEG (SOI, then an APP0 marker) and of a PNG (its signature), with a little after.
        static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8)
        static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D]

        /// A `PUT /photo` with the session ID (unless `sessionID` is nil) and `headers`.
        static func put(
            _ body: [UInt8] = jpeg, headers: [(name: String, value: String)] = [], sessionID: String? = sessionID,
            method: String = "PUT"
        ) -> HTTPRequest {
            let session = sessionID.map { [(name: "X-Apple-Session-ID", value: $0)] } ?? []
            return HTTPRequest(method: method, path: "/photo", headers: session + headers, body: body)
        }
    }

    private func assertRefused(_ request: HTTPRequest, _ status: HTTPStatus, line: UInt = #line) {
        XCTAssertThrowsError(try AirPlayRequest(request), line: line) { error in
            XCTAssertEqual((error as? HTTPRequestError)?.status, status, "\(error)", line: line)
        }
    }

    func testAPictureIsShownInTheClientsSession() throws {
        XCTAssertEqual(
            try AirPlayRequest(Fixtures.put()),
            .photo(AirPlayPhotoRequest(action: .show(picture: Fixtures.jpeg), sessionID: Fixtures.sessionID)))
        XCTAssertEqual(
            try AirPlayRequest(Fixtures.put(Fixtures.png)),
            .photo(AirPlayPhotoRequest(action: .show(picture: Fixtures.png), sessionID: Fixtures.sessionID)))
        // The transition is accepted and changes nothing.
        XCTAssertEqual(
            try AirPlayRequest(Fixtures.put(headers: [("X-Apple-Transition", "Dissolve")])),
            try AirPlayRequest(Fixtures.put()))
    }

    func testCacheOnlyAndDisplayCachedNeedTheirKey() throws {
        XCTAssertEqual(
            try AirPlayRequest(
                Fixtures.put(headers: [("X-Apple-AssetAction", "cacheOnly"), ("X-Apple-AssetKey", "K-1")])),
            .photo(
                AirPlayPhotoRequest(action: .cache(key: "K-1", picture: Fixtures.jpeg), sessionID: Fixtures.sessionID)))
        // displayCached needs no body; one sent is ignored.
        for body in [[], Fixtures.jpeg] {
            XCTAssertEqual(
                try AirPlayRequest(
                    Fixtures.put(
                        body, headers: [("X-Apple-AssetAction", "displayCached"), ("X-Apple-AssetKey", "K-1")])
                ),
                .photo(AirPlayPhotoRequest(action: .showCached(key: "K-1"), sessionID: Fixtures.sessionID)))
        }
        assertRefused(Fixtures.put(headers: [("X-Apple-AssetAction", "cacheOnly")]), .badRequest)
        assertRefused(Fixtures.put([], headers: [("X-Apple-AssetAction", "displayCached")]), .badRequest)
        assertRefused(
            Fixtures.put(headers: [("X-Apple-AssetAction", "slideshow"), ("X-Apple-AssetKey", "K-1")]), .badRequest)
        assertRefused(
            Fixtures.put(headers: [("X-Apple-AssetAction", "cacheOnly"), ("X-Apple-AssetKey", "a key")]), .badRequest)
        assertRefused(
            Fixtures.put(
                headers: [
                    ("X-Apple-AssetAction", "cacheOnly"), ("X-Apple-AssetKey", String(repeating: "k", count: 129)),
                ]
            ), .badRequest)
        // cacheOnly keeps a picture: an empty or foreign body is refused as for a show.
        assertRefused(
            Fixtures.put([], headers: [("X-Apple-AssetAction", "cacheOnly"), ("X-Apple-AssetKey", "K-1")]), .badRequest)
        assertRefused(
            Fixtures.put(
                Array("GIF89a".utf8), headers: [("X-Apple-AssetAction", "cacheOnly"), ("X-Apple-AssetKey", "K")]),
            .unsupportedMediaType)
    }

    func testTheSessionIDIsRequired() {
        assertRefused(Fixtures.put(sessionID: nil), .badRequest)
        assertRefused(Fixtures.put(sessionID: ""), .badRequest)
        assertRefused(Fixtures.put(sessionID: "two words"), .badRequest)
        assertRefused(Fixtures.put(sessionID: String(repeating: "s", count: 129)), .badRequest)
    }

    func testWhatIsNotAPictureIs415AndAnEmptyBody400() {
        assertRefused(Fixtures.put([]), .badRequest)
        assertRefused(Fixtures.put(Array("<html>".utf8)), .unsupportedMediaType)
        // Two bytes of a JPEG's three, and a PNG signature cut short.
        assertRefused(Fixtures.put([0xFF, 0xD8]), .unsupportedMediaType)
        assertRefused(Fixtures.put(Array(Fixtures.png.prefix(7))), .unsupportedMediaType)
        XCTAssertEqual(PictureFormat(of: Fixtures.jpeg), .jpeg)
        XCTAssertEqual(PictureFormat(of: Fixtures.png), .png)
    }

    func testPhotoIsAPut() {
        assertRefused(Fixtures.put(method: "POST"), .methodNotAllowed)
        assertRefused(Fixtures.put(method: "GET"), .methodNotAllowed)
    }

    /// The parser knows a picture's bound from the head, so a larger one is refused before its body is read; the
    /// other routes keep theirs.
    func testThePictureIsBoundedBeforeItsBodyIsRead() throws {
        func head(_ method: String, _ path: String, length: Int) -> [UInt8] {
            Array("\(method) \(path) HTTP/1.1\r\nX-Apple-Session-ID: S\r\nContent-Length: \(length)\r\n\r\n".utf8)
        }
        var parser = HTTPRequestParser()
        parser.feed(head("PUT", "/photo", length: AirPlayPhotoRequest.maximumSize + 1))
        XCTAssertThrowsError(try parser.nextRequest()) { error in
            XCTAssertEqual((error as? HTTPRequestError)?.status, .contentTooLarge)
        }
        // 16 MiB exactly is awaited, not refused; so is a picture on a path with a query.
        for path in ["/photo", "/photo?x=1"] {
            var accepting = HTTPRequestParser()
            accepting.feed(head("PUT", path, length: AirPlayPhotoRequest.maximumSize))
            XCTAssertNil(try accepting.nextRequest())
            XCTAssertTrue(accepting.hasPartialRequest)
            // The server knows from the head how much it is asked to keep (castd bounds pictures arriving at once).
            XCTAssertEqual(accepting.awaitedBodyLength, AirPlayPhotoRequest.maximumSize)
        }
        // Other methods and routes keep the small bound.
        for (method, path) in [("POST", "/photo"), ("POST", "/play"), ("PUT", "/play")] {
            var small = HTTPRequestParser()
            small.feed(head(method, path, length: 64 * 1024 + 1))
            XCTAssertThrowsError(try small.nextRequest(), "\(method) \(path)") { error in
                XCTAssertEqual((error as? HTTPRequestError)?.status, .contentTooLarge)
            }
        }
        // A whole picture arrives with its body.
        var whole = HTTPRequestParser()
        let picture = Fixtures.jpeg + [UInt8](repeating: 7, count: 200_000)
        whole.feed(head("PUT", "/photo", length: picture.count) + picture)
        XCTAssertEqual(try whole.nextRequest()?.body, picture)
    }
}
