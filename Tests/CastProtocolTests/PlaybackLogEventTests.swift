import Foundation
import XCTest

@testable import CastProtocol

/// The buffering, log and metadata events: their JSON lines, and the bounds decoding enforces.
final class PlaybackLogEventTests: XCTestCase {
    private enum Fixtures {
        static let access = AccessLogEntry(
            uri: "clip.mp4", serverAddress: "10.0.0.2:5000", playbackStartDate: 100, startupTime: 0.5,
            indicatedBitrate: 1_300_000, observedBitrate: 600_000, stalls: 2, stallDuration: 3.25, droppedFrames: 0,
            bytesTransferred: 983_637, transferDuration: 13, durationWatched: 6)
        static let error = ErrorLogEntry(
            date: 100, uri: "http://h/x.mp4", serverAddress: "h", statusCode: 401, domain: "http",
            comment: "avformat_open_input: Server returned 401 Unauthorized (authorization failed)")

        static func decode(_ line: String) throws -> PlaybackEvent {
            try JSONDecoder().decode(PlaybackEvent.self, from: Data(line.utf8))
        }
    }

    func testJSONLines() throws {
        let lines: [(PlaybackEvent, String)] = [
            (
                .buffered(playableDuration: 4.5, ahead: 2.25),
                #"{"ahead":2.25,"event":"buffered","playableDuration":4.5}"#
            ),
            (
                // With the link's rate and a stall's expected wait (new keys: optional, for older senders and
                // receivers alike).
                .buffered(playableDuration: 4.5, ahead: 0.25, linkRate: 790_000, wait: 14),
                #"{"ahead":0.25,"event":"buffered","linkRate":790000,"playableDuration":4.5,"wait":14}"#
            ),
            (
                .metadata(TimedMetadata(items: ["title": "T", "artist": "A"], artwork: true)),
                #"{"artwork":true,"event":"metadata","metadata":{"artist":"A","title":"T"}}"#
            ),
            (
                .errorLog(Fixtures.error),
                #"{"errorLog":{"comment":"avformat_open_input: Server returned 401 Unauthorized (authorization failed)","#
                    + #""date":100,"domain":"http","serverAddress":"h","statusCode":401,"uri":"http://h/x.mp4"},"event":"errorLog"}"#
            ),
            (.loadState(.stalled), #"{"event":"loadState","loadState":["stalled"]}"#),
        ]
        for (event, line) in lines {
            XCTAssertEqual(event.jsonLine, line)
            XCTAssertEqual(try Fixtures.decode(line), event)
        }
        let access = PlaybackEvent.accessLog(Fixtures.access)
        XCTAssertEqual(try Fixtures.decode(access.jsonLine), access)
        XCTAssertTrue(access.jsonLine.contains(#""stalls":2"#), access.jsonLine)
        XCTAssertTrue(access.jsonLine.hasPrefix(#"{"accessLog":{"bytesTransferred":983637,"#), access.jsonLine)
    }

    func testMetadataIsTrimmedWhenMadeAndRefusedWhenDecoded() throws {
        var many: [String: String] = [:]
        for i in 0..<100 { many[String(format: "key%03d", i)] = "v" }
        many["a-long"] = String(repeating: "é", count: 1000)
        let trimmed = TimedMetadata(items: many, artwork: false)
        XCTAssertEqual(trimmed.items.count, TimedMetadata.maximumItems)
        XCTAssertEqual(trimmed.items["a-long"]?.utf8.count, TimedMetadata.maximumValueBytes)
        XCTAssertEqual(try Fixtures.decode(PlaybackEvent.metadata(trimmed).jsonLine), .metadata(trimmed))

        let tooMany = (0..<65).map { #""k\#($0)":"v""# }.joined(separator: ",")
        let long = String(repeating: "x", count: 1025)
        for line in [
            #"{"event":"metadata","artwork":false,"metadata":{\#(tooMany)}}"#,
            #"{"event":"metadata","artwork":false,"metadata":{"title":"\#(long)"}}"#,
            #"{"event":"metadata","artwork":false,"metadata":{"":"v"}}"#,
            #"{"event":"metadata","metadata":{}}"#,
        ] {
            XCTAssertThrowsError(try Fixtures.decode(line), String(line.prefix(80)))
        }
    }

    func testLogEntriesCutLongTextsSoThatTheyDecode() throws {
        let long = String(repeating: "é", count: 3000)
        let access = AccessLogEntry(uri: long, playbackStartDate: 1)
        XCTAssertEqual(access.uri?.utf8.count, AccessLogEntry.maximumTextBytes)
        let error = ErrorLogEntry(date: 1, domain: long, comment: long)
        XCTAssertEqual(error.domain.utf8.count, 64)
        XCTAssertEqual(try Fixtures.decode(PlaybackEvent.errorLog(error).jsonLine), .errorLog(error))
        XCTAssertEqual(try Fixtures.decode(PlaybackEvent.accessLog(access).jsonLine), .accessLog(access))
    }

    func testLogsAndBufferedAreBounded() {
        let longURI = String(repeating: "u", count: AccessLogEntry.maximumTextBytes + 1)
        for line in [
            #"{"event":"buffered","playableDuration":-1,"ahead":0}"#,
            #"{"event":"buffered","playableDuration":1}"#,
            #"{"event":"buffered","playableDuration":1,"ahead":0,"linkRate":-1}"#,
            #"{"event":"buffered","playableDuration":1,"ahead":0,"wait":-1}"#,
            #"{"event":"accessLog","accessLog":{"playbackStartDate":1,"stalls":-1,"stallDuration":0,"droppedFrames":0,"bytesTransferred":0,"transferDuration":0,"durationWatched":0}}"#,
            #"{"event":"accessLog","accessLog":{"playbackStartDate":1,"stalls":0,"stallDuration":-2,"droppedFrames":0,"bytesTransferred":0,"transferDuration":0,"durationWatched":0}}"#,
            #"{"event":"accessLog","accessLog":{"uri":"\#(longURI)","playbackStartDate":1,"stalls":0,"stallDuration":0,"droppedFrames":0,"bytesTransferred":0,"transferDuration":0,"durationWatched":0}}"#,
            #"{"event":"errorLog","errorLog":{"date":1,"domain":"http"}}"#,
            #"{"event":"errorLog","errorLog":{"date":1,"domain":"\#(String(repeating: "d", count: 65))","comment":"c"}}"#,
        ] {
            XCTAssertThrowsError(try Fixtures.decode(line), String(line.prefix(100)))
        }
    }

    func testStatusCarriesLoadStateAndPlayableDurationAndTheAccessLogControlRoundTrips() throws {
        var status = ReceiverStatus(
            name: "Box", id: "1", state: .interrupted, title: "clip.mp4", position: 2, duration: 6)
        status.loadState = .stalled
        status.playableDuration = 2.05
        status.linkRate = 790_000
        XCTAssertEqual(try Message(Message.status(status).frame()), .status(status))
        // A receiver that predates the link rate sends none; a rate that is no rate is refused.
        status.linkRate = nil
        XCTAssertEqual(try Message(Message.status(status).frame()), .status(status))
        let bad = #"{"name":"Box","id":"1","state":"playing","linkRate":-5}"#
        XCTAssertThrowsError(try Message(Frame(type: MessageType.status.rawValue, payload: Array(bad.utf8))))
        let control = Message.control(PlaybackControl(.accessLog))
        XCTAssertEqual(try Message(control.frame()), control)
        XCTAssertEqual(String(decoding: control.frame().payload, as: UTF8.self), #"{"action":"accessLog"}"#)
    }
}
