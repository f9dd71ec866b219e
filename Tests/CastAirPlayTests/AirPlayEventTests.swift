import CastProtocol
import Foundation
import XCTest

@testable import CastAirPlay

/// The reverse connection's rules (`POST /reverse`, `POST /event`): the route, the events a session's playback makes,
/// the requests castd writes, and the reading of the client's answers, bounded.
final class AirPlayEventTests: XCTestCase {
    private static let sessionID = "9F3E5C2A-0000-4000-8000-000000000001"

    private func reverse(_ headers: [(name: String, value: String)]) -> HTTPRequest {
        HTTPRequest(method: "POST", path: "/reverse", headers: headers)
    }

    func testReverseNeedsPTTHAndASessionAndServesEventsOnly() throws {
        let upgrade = [("Upgrade", "PTTH/1.0"), ("Connection", "Upgrade"), ("X-Apple-Session-ID", Self.sessionID)]
        XCTAssertEqual(try AirPlayRequest(reverse(upgrade)), .reverse(sessionID: Self.sessionID))
        XCTAssertEqual(
            try AirPlayRequest(reverse(upgrade + [("X-Apple-Purpose", "event")])), .reverse(sessionID: Self.sessionID))
        for (headers, what) in [
            ([("X-Apple-Session-ID", Self.sessionID)], "no Upgrade"),
            ([("Upgrade", "websocket"), ("X-Apple-Session-ID", Self.sessionID)], "another protocol"),
            ([("Upgrade", "PTTH/1.0")], "no session"),
            ([("Upgrade", "PTTH/1.0"), ("X-Apple-Session-ID", "two words")], "a session ID with a blank"),
            (upgrade + [("X-Apple-Purpose", "slideshow")], "photos"),
        ] {
            XCTAssertThrowsError(try AirPlayRequest(reverse(headers)), what) { error in
                XCTAssertEqual((error as? HTTPRequestError)?.status, .badRequest, what)
            }
        }
        XCTAssertThrowsError(try AirPlayRequest(HTTPRequest(method: "GET", path: "/reverse", headers: upgrade))) {
            XCTAssertEqual(($0 as? HTTPRequestError)?.status, .methodNotAllowed)
        }
        // The answer turns the connection around: no length, no body.
        let answer = String(decoding: HTTPResponse.reverse.encoded(), as: UTF8.self)
        XCTAssertEqual(
            answer, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: PTTH/1.0\r\nConnection: Upgrade\r\n\r\n")
    }

    func testPlaybackEventsBecomeTheStatesAnAppleTVSends() {
        XCTAssertEqual(AirPlayEvent(.playbackState(.playing)), AirPlayEvent(state: .playing))
        XCTAssertEqual(AirPlayEvent(.playbackState(.paused)), AirPlayEvent(state: .paused))
        XCTAssertEqual(AirPlayEvent(.playbackState(.interrupted)), AirPlayEvent(state: .loading))
        XCTAssertEqual(AirPlayEvent(.playbackState(.seekingForward)), AirPlayEvent(state: .loading))
        XCTAssertEqual(
            AirPlayEvent(.finished(reason: .playbackEnded, error: nil)), AirPlayEvent(state: .stopped, reason: "ended"))
        XCTAssertEqual(
            AirPlayEvent(.finished(reason: .userExited, error: nil)), AirPlayEvent(state: .stopped, reason: "stopped"))
        XCTAssertEqual(
            AirPlayEvent(.finished(reason: .playbackError, error: "gone")),
            AirPlayEvent(state: .stopped, reason: "error"))
        XCTAssertNil(AirPlayEvent(.position(seconds: 1, at: 2)))
        XCTAssertNil(AirPlayEvent(.playbackState(.stopped)))
        XCTAssertNil(AirPlayEvent(.durationAvailable(10)))
    }

    /// What castd writes is an HTTP request our own parser reads back, with an XML property list a client reads.
    func testTheEventRequestIsAPostOfAnXMLPropertyList() throws {
        var parser = HTTPRequestParser()
        parser.feed(AirPlayEvent(state: .stopped, reason: "ended").request(sessionID: Self.sessionID))
        let request = try XCTUnwrap(try parser.nextRequest())
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.path, "/event")
        XCTAssertEqual(request.header("Content-Type"), "text/x-apple-plist+xml")
        XCTAssertEqual(request.header("X-Apple-Session-ID"), Self.sessionID)
        let plist = try PropertyListSerialization.propertyList(from: Data(request.body), format: nil)
        let fields = try XCTUnwrap(plist as? [String: String])
        XCTAssertEqual(fields, ["category": "video", "state": "stopped", "reason": "ended"])
    }

    /// A picture's session says `category: photo`, with the same states and reasons as a video's.
    func testAPhotoSessionsEventsSayPhoto() throws {
        let shown = try XCTUnwrap(AirPlayEvent(.playbackState(.playing), category: .photo))
        XCTAssertEqual(shown, AirPlayEvent(state: .playing, category: .photo))
        XCTAssertEqual(
            AirPlayEvent(.finished(reason: .userExited, error: nil), category: .photo),
            AirPlayEvent(state: .stopped, reason: "stopped", category: .photo))
        var parser = HTTPRequestParser()
        parser.feed(shown.request(sessionID: Self.sessionID))
        let request = try XCTUnwrap(try parser.nextRequest())
        let plist = try PropertyListSerialization.propertyList(from: Data(request.body), format: nil)
        XCTAssertEqual(try XCTUnwrap(plist as? [String: String]), ["category": "photo", "state": "playing"])
    }

    func testAnswersAreReadWholeAcrossReadsAndBounded() throws {
        var reader = AirPlayEventAnswerReader()
        let ok = Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nDate: now\r\n\r\nhello".utf8)
        // Byte by byte: one status, once the body's last byte came.
        var statuses: [Int] = []
        for byte in ok { statuses += try reader.feed([byte]) }
        XCTAssertEqual(statuses, [200])
        // Two at once, the second without a length.
        XCTAssertEqual(try reader.feed(ok + Array("HTTP/1.0 204 No Content\r\n\r\n".utf8)), [200, 204])
        for (bytes, what) in [
            (Array("SIP/2.0 200 OK\r\n\r\n".utf8), "not HTTP"),
            (Array("HTTP/1.1 2000 OK\r\n\r\n".utf8), "a bad status"),
            (Array("HTTP/1.1 200 OK\r\nContent-Length: 99999999\r\n\r\n".utf8), "a body over 64 KiB"),
            (Array("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n".utf8), "a negative length"),
            (Array("HTTP/1.1 200 OK\r\nno colon\r\n\r\n".utf8), "a header line without a colon"),
            ([UInt8](repeating: 65, count: 17 * 1024), "a head over 16 KiB"),
        ] {
            var fresh = AirPlayEventAnswerReader()
            XCTAssertThrowsError(try fresh.feed(bytes), what)
        }
    }
}
