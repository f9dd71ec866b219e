import XCTest

@testable import CastRAOP

final class RTSPResponseParserTests: XCTestCase {
    private enum Fixtures {
        /// What shairport-sync 3.3.8 answers to SETUP (captured in the lab).
        static let setup = Array(
            ("RTSP/1.0 200 OK\r\nCSeq: 2\r\nSession: 1\r\n"
                + "Transport: RTP/AVP/UDP;unicast;interleaved=0-1;mode=record;control_port=6002;timing_port=6003;server_port=6001\r\n"
                + "Server: AirTunes/105.1\r\n\r\n").utf8)
    }

    func testParsesAResponseFedByteByByte() throws {
        var parser = RTSPResponseParser()
        var responses: [RTSPResponse] = []
        for byte in Fixtures.setup {
            XCTAssertTrue(responses.isEmpty)
            parser.append([byte])
            if let response = try parser.nextResponse() { responses.append(response) }
        }
        let response = try XCTUnwrap(responses.first)
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.reason, "OK")
        XCTAssertEqual(response.cseq, 2)
        XCTAssertEqual(response.header("transport")?.hasSuffix("server_port=6001"), true)
        XCTAssertEqual(parser.bufferedByteCount, 0)
    }

    func testBodyOfContentLengthAndTwoResponsesInOneRead() throws {
        var parser = RTSPResponseParser()
        parser.append(
            Array(
                "RTSP/1.0 200 OK\r\nCSeq: 1\r\nContent-Length: 5\r\n\r\nhelloRTSP/1.0 453 Not Enough Bandwidth\r\nCSeq: 2\r\n\r\n"
                    .utf8))
        let first = try XCTUnwrap(try parser.nextResponse())
        XCTAssertEqual(first.body, Array("hello".utf8))
        let second = try XCTUnwrap(try parser.nextResponse())
        XCTAssertEqual(second.status, 453)
        XCTAssertEqual(second.reason, "Not Enough Bandwidth")
        XCTAssertNil(try parser.nextResponse())
    }

    func testWaitsForTheWholeBody() throws {
        var parser = RTSPResponseParser()
        parser.append(Array("RTSP/1.0 200 OK\r\nContent-Length: 4\r\n\r\nab".utf8))
        XCTAssertNil(try parser.nextResponse())
        parser.append(Array("cd".utf8))
        XCTAssertEqual(try parser.nextResponse()?.body, Array("abcd".utf8))
    }

    func testRefusesWhatIsNotAnRTSPResponse() {
        for text in [
            "HTTP/1.1 200 OK\r\n\r\n", "RTSP/1.0 20 OK\r\n\r\n", "RTSP/1.0 2x0 OK\r\n\r\n",
            "RTSP/1.0 200 OK\r\nNoColon\r\n\r\n",
            "RTSP/1.0 200 OK\r\n: empty name\r\n\r\n", "RTSP/1.0 200 OK\r\nBad Name: x\r\n\r\n",
            "RTSP/1.0 200 OK\rCSeq: 1\r\n\r\n", "RTSP/1.0 200 OK\r\nCSeq: \u{0}1\r\n\r\n",
            "RTSP/1.0 200 OK\r\nContent-Length: -1\r\n\r\n",
            "RTSP/1.0 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        ] {
            var parser = RTSPResponseParser()
            parser.append(Array(text.utf8))
            XCTAssertThrowsError(try parser.nextResponse(), text.debugDescription) { error in
                XCTAssertEqual((error as? RAOPError)?.code, .malformedResponse, text.debugDescription)
            }
        }
    }

    func testBoundsHeadHeadersAndBody() {
        // A head that never ends: refused once past the limit, without waiting for more.
        var endless = RTSPResponseParser()
        endless.append(
            Array("RTSP/1.0 200 OK\r\nX: ".utf8) + [UInt8](repeating: 0x61, count: RTSPResponseParser.maximumHeadBytes))
        XCTAssertThrowsError(try endless.nextResponse()) { XCTAssertEqual(($0 as? RAOPError)?.code, .responseTooLarge) }

        var many = RTSPResponseParser()
        many.append(Array(("RTSP/1.0 200 OK\r\n" + String(repeating: "A: b\r\n", count: 65) + "\r\n").utf8))
        XCTAssertThrowsError(try many.nextResponse()) { XCTAssertEqual(($0 as? RAOPError)?.code, .responseTooLarge) }

        var huge = RTSPResponseParser()
        huge.append(Array("RTSP/1.0 200 OK\r\nContent-Length: 65537\r\n\r\n".utf8))
        XCTAssertThrowsError(try huge.nextResponse()) { XCTAssertEqual(($0 as? RAOPError)?.code, .responseTooLarge) }
    }
}
