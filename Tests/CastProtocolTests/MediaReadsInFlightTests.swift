import XCTest

@testable import CastProtocol

final class MediaReadsInFlightTests: XCTestCase {
    func testSeveralReadsInFlightAreAnsweredInTheOrderSent() throws {
        var reads = MediaReadsInFlight(limit: 3)
        for offset in [0, 100, 200] as [Int64] { reads.sent(MediaRead(offset: offset, length: 100)) }
        XCTAssertTrue(reads.isFull)
        XCTAssertTrue(reads.contains(offset: 100))
        XCTAssertFalse(reads.contains(offset: 100, resource: MediaRead.subtitles))
        XCTAssertEqual(try reads.answer(offset: 0, count: 100), MediaRead(offset: 0, length: 100))
        XCTAssertFalse(reads.isFull)
        // Fewer bytes than asked (the end of the media) answer a read too.
        XCTAssertEqual(try reads.answer(offset: 100, count: 30), MediaRead(offset: 100, length: 100))
        XCTAssertEqual(try reads.fail(), MediaRead(offset: 200, length: 100))
        XCTAssertEqual(reads.reads, [])
    }

    func testAnAnswerOutOfOrderOrToNoReadIsRefusedAndChangesNothing() {
        var reads = MediaReadsInFlight(limit: 3)
        XCTAssertThrowsError(try reads.answer(offset: 0, count: 1)) { error in
            XCTAssertEqual((error as? ProtocolError)?.code, .unexpectedMessage)
        }
        XCTAssertThrowsError(try reads.fail())
        reads.sent(MediaRead(offset: 0, length: 100))
        reads.sent(MediaRead(offset: 100, length: 100))
        let before = reads
        // The second read's answer before the first's.
        XCTAssertThrowsError(try reads.answer(offset: 100, count: 100)) { error in
            XCTAssertEqual((error as? ProtocolError)?.code, .unexpectedMessage)
        }
        // A range nobody asked for.
        XCTAssertThrowsError(try reads.answer(offset: 50, count: 10))
        XCTAssertEqual(reads, before)
    }

    func testAnAnswerLongerThanAskedIsRefused() {
        var reads = MediaReadsInFlight(limit: 2)
        reads.sent(MediaRead(offset: 0, length: 100))
        XCTAssertThrowsError(try reads.answer(offset: 0, count: 101)) { error in
            XCTAssertEqual((error as? ProtocolError)?.code, .malformedMessage)
        }
        XCTAssertThrowsError(try reads.answer(offset: 0, count: -1))
        XCTAssertEqual(reads.reads.count, 1)
    }

    func testReadsAheadSkipWhatIsOnItsWayAndStopAtTheEndAndTheLimit() {
        var reads = MediaReadsInFlight(limit: 4)
        reads.sent(MediaRead(offset: 0, length: 100))
        // The range at 0 is in flight, the one at 100 arrived: 200 and 300 are asked for, one place stays free.
        XCTAssertEqual(
            reads.ahead(of: 0, length: 100, depth: 4, size: nil, arrived: [(offset: 100, count: 100)]),
            [MediaRead(offset: 200, length: 100), MediaRead(offset: 300, length: 100)])
        // Not past the end, the last read cut to it.
        XCTAssertEqual(
            reads.ahead(of: 0, length: 100, depth: 4, size: 250),
            [MediaRead(offset: 100, length: 100), MediaRead(offset: 200, length: 50)])
        // No more than the free places.
        reads.sent(MediaRead(offset: 900, length: 100))
        reads.sent(MediaRead(offset: 1000, length: 100))
        XCTAssertEqual(reads.ahead(of: 0, length: 100, depth: 4, size: nil), [MediaRead(offset: 100, length: 100)])
        // An empty answer that arrived is the end: nothing after it.
        XCTAssertEqual(reads.ahead(of: 500, length: 100, depth: 3, size: nil, arrived: [(offset: 500, count: 0)]), [])
    }
}

final class MediaReadCodingTests: XCTestCase {
    /// The hand-written payload is byte for byte what the JSON encoder writes, and reads back as the decoder reads it.
    func testTheCanonicalPayloadIsTheJSONEncodersBytes() throws {
        var random = SystemRandomNumberGenerator()
        var reads = [
            MediaRead(offset: 0, length: 1), MediaRead(offset: 0, length: MediaRead.maximumLength),
            MediaRead(offset: Int64.max / 10, length: 65536), MediaRead(offset: 7, length: 100, resource: 1),
        ]
        for _ in 0..<200 {
            reads.append(
                MediaRead(
                    offset: Int64.random(in: 0...(1 << 50), using: &random), length: Int.random(in: 1...(1 << 20)),
                    resource: Bool.random(using: &random) ? 1 : nil))
        }
        var zero = MediaRead(offset: 5, length: 5)
        zero.resource = 0
        reads.append(zero)
        for read in reads {
            XCTAssertEqual(read.canonicalPayload, JSONPayload.encode(read), "\(read)")
            XCTAssertEqual(MediaRead.canonical(JSONPayload.encode(read)), read)
            XCTAssertEqual(try Message(Message.mediaRead(read).frame()), .mediaRead(read))
        }
    }

    /// Anything else is not read by hand, and the JSON rules judge it as before: accepted with spaces, keys in
    /// another order or unknown keys; refused when negative, too long, or not a read at all.
    func testOtherFormsAreLeftToTheJSONRules() throws {
        let accepted: [(String, MediaRead)] = [
            (#"{"offset":3,"length":10}"#, MediaRead(offset: 3, length: 10)),
            (#"{ "length": 10, "offset": 3 }"#, MediaRead(offset: 3, length: 10)),
            (#"{"length":10,"offset":3,"extra":true}"#, MediaRead(offset: 3, length: 10)),
            (#"{"length":10.0,"offset":3}"#, MediaRead(offset: 3, length: 10)),
        ]
        for (text, read) in accepted {
            XCTAssertNil(MediaRead.canonical(Array(text.utf8)), text)
            XCTAssertEqual(
                try Message(Frame(type: MessageType.mediaRead.rawValue, payload: Array(text.utf8))), .mediaRead(read))
        }
        let refused = [
            #"{"length":10,"offset":-3}"#, #"{"length":0,"offset":3}"#, #"{"length":1048577,"offset":3}"#,
            #"{"length":10,"offset":3,"resource":2}"#, #"{"length":10}"#, #"{"length":010,"offset":3}"#,
            #"{"length":10,"offset":3}x"#, #"{"length":10,"offset":99999999999999999999}"#,
        ]
        for text in refused {
            XCTAssertThrowsError(
                try Message(Frame(type: MessageType.mediaRead.rawValue, payload: Array(text.utf8))), text)
        }
        XCTAssertNil(MediaRead.canonical(Array(#"{"length":010,"offset":3}"#.utf8)))
        XCTAssertNil(MediaRead.canonical(Array(#"{"length":1234567890123456789,"offset":3}"#.utf8)))
    }
}
