import Foundation
import XCTest

@testable import CastProtocol

final class MessageTests: XCTestCase {
    private enum Fixtures {
        static let hello = Hello(name: "alice@laptop", software: "cast test")
        static let welcome = Welcome(name: "Living Room", id: String(repeating: "ab", count: 16), auth: "none")
        static let status = ReceiverStatus(
            name: "Living Room", id: "00ff", state: .playing, title: "clip.mp4", position: 1.5, duration: 5)
    }

    /// Error codes travel as their word; one this version does not know (a newer peer's) keeps its word and matches
    /// none of ours.
    func testErrorCodesAreWordsAndUnknownOnesSurvive() throws {
        let known = try JSONEncoder().encode(ErrorMessage(code: .busy, message: "m"))
        XCTAssertEqual(
            try JSONSerialization.jsonObject(with: known) as? NSDictionary,
            ["code": "busy", "message": "m"] as NSDictionary)
        let newer = try JSONDecoder().decode(
            ErrorMessage.self, from: Data(#"{"code":"overheated","message":"m"}"#.utf8))
        XCTAssertEqual(newer.code.rawValue, "overheated")
        XCTAssertNotEqual(newer.code, .busy)
        XCTAssertThrowsError(try JSONDecoder().decode(ErrorMessage.self, from: Data(#"{"code":7,"message":"m"}"#.utf8)))
    }

    func testEveryMessageRoundTrips() throws {
        let messages: [Message] = [
            .hello(Fixtures.hello), .welcome(Fixtures.welcome), .statusRequest, .status(Fixtures.status),
            .status(ReceiverStatus(name: "Box", id: "1", state: .stopped)),
            .error(ErrorMessage(code: .timeout, message: "too slow")),
            .play(
                PlayRequest(title: "clip.mp4", media: MediaDescriptor(size: 1234, seekable: true, nameHint: "clip.mp4"))
            ),
            .play(
                PlayRequest(title: "-", media: MediaDescriptor(size: nil, seekable: false, nameHint: nil), startTime: 2)
            ),
            .playAccepted(PlayAccepted(session: "abc")),
            .event(.playbackState(.playing)), .event(.finished(reason: .playbackError, error: "boom")),
            .control(PlaybackControl(.pause)), .mediaHello(MediaHello(session: "abc")),
            .control(PlaybackControl(.seek(position: 12.5, exact: false))), .control(PlaybackControl(.volume(0.25))),
            .control(PlaybackControl(.mute(true))), .control(PlaybackControl(.rate(1.5))),
            .event(.volume(0.5, muted: true)), .event(.rate(2)), .watch, .event(.sync(offset: -0.000036, trim: -92.5)),
            .control(PlaybackControl(.scaling(.aspectFill))), .control(PlaybackControl(.resumeAt(7_000_123_456_789))),
            .control(PlaybackControl(.align(elapsed: 12.5, at: 7_000_123_456_789))), .control(PlaybackControl(.anchor)),
            .thumbnailRequest(ThumbnailRequest(request: 7, times: [1.5, 30], exact: true, maxWidth: 640)),
            .thumbnailRequest(ThumbnailRequest(request: 8, times: [0], exact: false)), .thumbnailCancel,
            .thumbnail(ThumbnailPart(request: 7, index: 1, time: 30, error: "cancelled")),
            .thumbnail(
                ThumbnailPart(
                    request: 7, index: 0, time: 1.5, actualTime: 1.52, width: 640, height: 360, part: 0, parts: 2,
                    data: Array(repeating: 0xAB, count: ThumbnailPart.maximumPartBytes))),
            .mediaRead(MediaRead(offset: 1 << 40, length: MediaRead.maximumLength)),
            .timeRequest(TimeRequest(sent: 123_456_789)), .timeRequest(TimeRequest(sent: .max)),
            .timeReply(TimeReply(sent: 1, received: 7_000_000_123, replied: 7_000_000_456)),
            .mediaData(MediaData(offset: 5, bytes: [1, 2, 3])), .mediaData(MediaData(offset: 99, bytes: [])),
            .pairing(.start(PairingStart(name: "bob", publicKey: Array(repeating: 1, count: 32)))),
            .pairing(.challenge(PairingChallenge(salt: [1, 2], B: [3, 4]))),
            .pairing(.proof(PairingProof(A: [5], M1: Array(repeating: 6, count: 64)))),
            .pairing(
                .confirmation(
                    PairingConfirmation(M2: Array(repeating: 7, count: 64), publicKey: Array(repeating: 8, count: 32)))),
            .pairing(.failure(PairingFailure(reason: .locked, message: "wait", retryAfter: 60))),
        ]
        for message in messages {
            XCTAssertEqual(try Message(message.frame()), message)
        }
        XCTAssertEqual(Set(messages.map(\.type)), Set(MessageType.allCases))
    }

    func testWireIdsAreStable() {
        XCTAssertEqual(MessageType.allCases.map(\.rawValue), Array(1...18) + Array(30...34))
    }

    func testHelloPayloadIsJSON() throws {
        let frame = Message.hello(Fixtures.hello).frame()
        let text = String(decoding: frame.payload, as: UTF8.self)
        XCTAssertEqual(text, #"{"name":"alice@laptop","software":"cast test","version":1}"#)
    }

    func testMediaDataIsBinaryWithABigEndianOffset() {
        let frame = Message.mediaData(MediaData(offset: 0x0102, bytes: [0xAA])).frame()
        XCTAssertEqual(frame.payload, [0, 0, 0, 0, 0, 0, 1, 2, 0xAA])
        assertRejected(Frame(type: MessageType.mediaData.rawValue, payload: [0, 0, 0]), .malformedMessage)
        assertRejected(
            Frame(type: MessageType.mediaData.rawValue, payload: [0xFF] + Array(repeating: 0, count: 7)),
            .malformedMessage)
    }

    func testMediaReadIsBounded() {
        for (offset, length) in [(0, 0), (-1, 10), (0, MediaRead.maximumLength + 1)] {
            let json = #"{"offset":\#(offset),"length":\#(length)}"#
            assertRejected(Frame(type: MessageType.mediaRead.rawValue, payload: Array(json.utf8)), .malformedMessage)
        }
        for resource in [-1, 2, 1 << 40] {
            let json = #"{"offset":0,"length":10,"resource":\#(resource)}"#
            assertRejected(Frame(type: MessageType.mediaRead.rawValue, payload: Array(json.utf8)), .malformedMessage)
        }
        let subtitles = Message.mediaRead(MediaRead(offset: 5, length: 10, resource: MediaRead.subtitles)).frame()
        XCTAssertEqual(try Message(subtitles), .mediaRead(MediaRead(offset: 5, length: 10, resource: 1)))
        // The media is resource 0, written as no resource at all (what senders before subtitles understand).
        let media = String(
            decoding: Message.mediaRead(MediaRead(offset: 0, length: 1, resource: 0)).frame().payload, as: UTF8.self)
        XCTAssertFalse(media.contains("resource"), media)
    }

    func testTracksEventRoundTripsAndIsBounded() throws {
        let tracks = [
            MediaTrack(index: 1, kind: .audio, language: "eng", title: "Director", codec: "aac", selected: true),
            MediaTrack(index: -1, kind: .subtitle, language: nil, title: nil, codec: "subrip", selected: true),
        ]
        let event = PlaybackEvent.tracks(tracks)
        XCTAssertEqual(try JSONDecoder().decode(PlaybackEvent.self, from: Data(event.jsonLine.utf8)), event)
        let many = PlaybackEvent.tracks(Array(repeating: tracks[0], count: MediaTrack.maximumCount + 1))
        XCTAssertThrowsError(try JSONDecoder().decode(PlaybackEvent.self, from: Data(many.jsonLine.utf8)))
    }

    func testSubtitleFileIsBoundedAndOnlyWithServedMedia() {
        for json in [
            #"{"title":"a","media":{"seekable":true},"subtitles":{"size":0}}"#,
            #"{"title":"a","media":{"seekable":true},"subtitles":{"size":8388609}}"#,
            #"{"title":"a","url":"http://example.com/a.mkv","subtitles":{"size":10}}"#,
        ] {
            assertRejected(Frame(type: MessageType.play.rawValue, payload: Array(json.utf8)), .malformedMessage)
        }
        var request = PlayRequest(title: "a", media: MediaDescriptor(size: 1, seekable: true, nameHint: "a.mkv"))
        request.subtitles = SubtitleFile(size: 8 << 20, nameHint: "a.srt")
        XCTAssertEqual(try Message(Message.play(request).frame()), .play(request))
    }

    /// A group member's `sync` event: finite, its trim within what a member may do.
    func testSyncEventsAreBounded() {
        for json in [
            #"{"event":"sync","offset":0.001}"#, #"{"event":"sync","offset":0,"trim":1500}"#,
            #"{"event":"sync","offset":"x","trim":1}"#,
        ] {
            assertRejected(Frame(type: MessageType.event.rawValue, payload: Array(json.utf8)), .malformedMessage)
        }
        let sync = Frame(
            type: MessageType.event.rawValue, payload: Array(#"{"event":"sync","offset":-0.5,"trim":99}"#.utf8))
        XCTAssertEqual(try Message(sync), .event(.sync(offset: -0.5, trim: 99)))
    }

    /// What a member computes for its `sync` event, at and past each limit, is an event the wire takes: clamped, and
    /// `limited` when the value was out of range by more than rounding (a trim held at −0.1 % computes as
    /// −1000.0000000000009 ppm, which a receiver refused before issue 33).
    func testASyncEventAtAndPastItsLimitsIsClampedToWhatTheWireTakes() throws {
        let cases: [(offset: Double, trim: Double, expected: PlaybackEvent)] = [
            (0.001, (0.999 - 1) * 1e6, .sync(offset: 0.001, trim: -1000)),
            (0.001, (1.001 - 1) * 1e6, .sync(offset: 0.001, trim: (1.001 - 1) * 1e6)),
            (-0.002, 1000, .sync(offset: -0.002, trim: 1000)),
            (0, 1000.5, .sync(offset: 0, trim: 1000, limited: true)),
            (0, -5000, .sync(offset: 0, trim: -1000, limited: true)),
            (1e8, 0, .sync(offset: 1e7, trim: 0, limited: true)),
            (-.infinity, .infinity, .sync(offset: -1e7, trim: 1000, limited: true)),
            (.nan, .nan, .sync(offset: 0, trim: 0, limited: true)),
        ]
        for (offset, trim, expected) in cases {
            let event = PlaybackEvent.sync(clampingOffset: offset, trim: trim, limited: false)
            XCTAssertEqual(event, expected, "\(offset), \(trim)")
            XCTAssertEqual(try Message(Message.event(event).frame()), .event(expected), "\(offset), \(trim)")
        }
        // A held correction says so on the wire, and only then.
        let held = Message.event(.sync(offset: 0, trim: 12, limited: true)).frame()
        XCTAssertTrue(String(decoding: held.payload, as: UTF8.self).contains(#""limited":true"#))
        XCTAssertFalse(
            String(decoding: Message.event(.sync(offset: 0, trim: 12)).frame().payload, as: UTF8.self).contains(
                "limited"))
    }

    func testControlsAreBounded() {
        for json in [
            #"{"action":"seek","position":-1}"#, #"{"action":"volume","volume":1.5}"#, #"{"action":"rate","rate":4}"#,
            #"{"action":"rate","rate":0.1}"#, #"{"action":"dance"}"#, #"{"action":"mute"}"#,
            #"{"action":"resume","at":-1}"#, #"{"action":"resume","at":1.5}"#, #"{"action":"resume","at":"soon"}"#,
            #"{"action":"align","elapsed":1}"#, #"{"action":"align","at":5}"#,
            #"{"action":"align","elapsed":-1,"at":5}"#, #"{"action":"align","elapsed":1,"at":-5}"#,
        ] {
            assertRejected(Frame(type: MessageType.control.rawValue, payload: Array(json.utf8)), .malformedMessage)
        }
        assertRejected(
            Frame(type: MessageType.control.rawValue, payload: Array(#"{"action":"scaling","mode":"zoom"}"#.utf8)),
            .malformedMessage)
        let scaling = Frame(
            type: MessageType.control.rawValue, payload: Array(#"{"action":"scaling","mode":"fill"}"#.utf8))
        XCTAssertEqual(try Message(scaling), .control(PlaybackControl(.scaling(.fill))))
        let seek = Frame(type: MessageType.control.rawValue, payload: Array(#"{"action":"seek","position":3}"#.utf8))
        XCTAssertEqual(
            try Message(seek), .control(PlaybackControl(.seek(position: 3, exact: true))), "exact by default")
        // A group's scheduled start: `resume` with the receiver's CLOCK_MONOTONIC instant; without it, at once.
        let scheduled = Frame(type: MessageType.control.rawValue, payload: Array(#"{"action":"resume","at":42}"#.utf8))
        XCTAssertEqual(try Message(scheduled), .control(PlaybackControl(.resumeAt(42))))
        XCTAssertEqual(PlaybackControl(.resumeAt(42)).action.word, "resume")
        let now = Frame(type: MessageType.control.rawValue, payload: Array(#"{"action":"resume"}"#.utf8))
        XCTAssertEqual(try Message(now), .control(PlaybackControl(.resume)))
    }

    /// A start time is bounded like a seek's position (issue #29): 1e300 s would overflow the engine's timestamps.
    func testPlayBoundsTheStartTime() throws {
        for start in ["1e300", "10000000.5", "1.8e19", "-0.001"] {
            let json = #"{"title":"a","media":{"seekable":true},"startTime":\#(start)}"#
            assertRejected(Frame(type: MessageType.play.rawValue, payload: Array(json.utf8)), .malformedMessage)
        }
        for start in [0.0, 12.5, 1e7] {
            let json = #"{"title":"a","media":{"seekable":true},"startTime":\#(start)}"#
            guard
                case .play(let request) = try Message(Frame(type: MessageType.play.rawValue, payload: Array(json.utf8)))
            else { return XCTFail("not a play") }
            XCTAssertEqual(request.startTime, start)
        }
    }

    func testPlayRejectsNegativeSizesAndStartTimes() {
        for json in [
            #"{"title":"a","media":{"size":-1,"seekable":true}}"#,
            #"{"title":"a","media":{"seekable":true},"startTime":-3}"#,
            #"{"title":"a","media":{"seekable":true},"audioLanguage":"french"}"#,
            #"{"title":"a","media":{"seekable":true},"audioLanguage":"f\nr"}"#,
            #"{"title":"a","media":{"seekable":true},"subtitleLanguage":"english"}"#,
            #"{"title":"a","media":{"seekable":true},"subtitleLanguage":"OFF!"}"#,
        ] {
            assertRejected(Frame(type: MessageType.play.rawValue, payload: Array(json.utf8)), .malformedMessage)
        }
        for language in ["off", "eng", "fr"] {
            let json = #"{"title":"a","media":{"seekable":true},"subtitleLanguage":"\#(language)"}"#
            guard
                case .play(let request)? = try? Message(
                    Frame(type: MessageType.play.rawValue, payload: Array(json.utf8)))
            else { return XCTFail("\(language) refused") }
            XCTAssertEqual(request.subtitleLanguage, language)
        }
    }

    /// `join` (a control castd passes on) and `joinRequest` (the event it becomes) carry a bounded, printable name.
    func testJoinAndJoinRequestCarryABoundedName() throws {
        let join = PlaybackControl(.join(receiver: "Study"))
        XCTAssertEqual(try Message(Message.control(join).frame()), .control(join))
        let request = PlaybackEvent.joinRequest(receiver: "Study")
        XCTAssertEqual(try Message(Message.event(request).frame()), .event(request))
        for bad in ["", String(repeating: "x", count: PlaybackControl.maximumReceiverName + 1), "Stu\u{1B}[2Jdy"] {
            assertRejected(Message.control(PlaybackControl(.join(receiver: bad))).frame(), .malformedMessage)
            assertRejected(Message.event(.joinRequest(receiver: bad)).frame(), .malformedMessage)
        }
    }

    /// `move` (a control castd passes on: `cast move`) and `moveRequest` (the event it becomes) carry a bounded,
    /// printable name, as `join` does.
    func testMoveAndMoveRequestCarryABoundedName() throws {
        let move = PlaybackControl(.move(receiver: "Living Room"))
        XCTAssertEqual(try Message(Message.control(move).frame()), .control(move))
        let request = PlaybackEvent.moveRequest(receiver: "Living Room")
        XCTAssertEqual(try Message(Message.event(request).frame()), .event(request))
        XCTAssertEqual(request.jsonLine, #"{"event":"moveRequest","receiver":"Living Room"}"#)
        for bad in ["", String(repeating: "x", count: PlaybackControl.maximumReceiverName + 1), "Stu\u{1B}[2Jdy"] {
            assertRejected(Message.control(PlaybackControl(.move(receiver: bad))).frame(), .malformedMessage)
            assertRejected(Message.event(.moveRequest(receiver: bad)).frame(), .malformedMessage)
        }
    }

    /// `scheduledStart` carries the instant a scheduled resume starts at (the receiver's CLOCK_MONOTONIC, ns) exactly,
    /// and where it starts from; a negative instant or a position that is not a number is refused.
    func testScheduledStartCarriesItsInstantExactly() throws {
        let start = PlaybackEvent.scheduledStart(at: 7_000_123_456_789, position: 12.5)
        XCTAssertEqual(try Message(Message.event(start).frame()), .event(start))
        XCTAssertEqual(start.jsonLine, #"{"at":7000123456789,"event":"scheduledStart","position":12.5}"#)
        for bad in [#"{"event":"scheduledStart","at":-1,"position":0}"#, #"{"event":"scheduledStart","at":5}"#] {
            assertRejected(Frame(type: MessageType.event.rawValue, payload: Array(bad.utf8)), .malformedMessage)
        }
    }

    /// `skip` (a control castd passes on: `cast next`) and `skipRequest` (the event it becomes) carry a direction;
    /// a play request and a status carry the queue's place, within bounds.
    func testSkipAndTheQueuesPlace() throws {
        for move in QueueMove.allCases {
            let skip = PlaybackControl(.skip(move))
            XCTAssertEqual(try Message(Message.control(skip).frame()), .control(skip))
            XCTAssertEqual(try Message(Message.event(.skipRequest(move)).frame()), .event(.skipRequest(move)))
        }
        let sideways = #"{"action":"skip","direction":"sideways"}"#
        assertRejected(Frame(type: MessageType.control.rawValue, payload: Array(sideways.utf8)), .malformedMessage)
        var request = PlayRequest(title: "a", media: MediaDescriptor(size: 1, seekable: true, nameHint: nil))
        request.queue = QueuePlace(number: 3, count: 12)
        XCTAssertEqual(try Message(Message.play(request).frame()), .play(request))
        var status = ReceiverStatus(name: "Kitchen", id: "k", state: .playing)
        status.queue = QueuePlace(number: 12, count: 12)
        XCTAssertEqual(try Message(Message.status(status).frame()), .status(status))
        for bad in [
            QueuePlace(number: 0, count: 3), QueuePlace(number: 4, count: 3), QueuePlace(number: -1, count: -1),
            QueuePlace(number: 1, count: QueuePlace.maximumCount + 1),
        ] {
            request.queue = bad
            assertRejected(Message.play(request).frame(), .malformedMessage)
            status.queue = bad
            assertRejected(Message.status(status).frame(), .malformedMessage)
        }
    }

    /// A group member's play request names its group (shown by `status`): 1 to 16 names, each bounded.
    func testPlayAndStatusCarryTheGroupWithinBounds() throws {
        var request = PlayRequest(title: "a", media: MediaDescriptor(size: 1, seekable: true, nameHint: nil))
        request.group = ["Kitchen", "Living Room"]
        XCTAssertEqual(try Message(Message.play(request).frame()), .play(request))
        var status = ReceiverStatus(name: "Kitchen", id: "k", state: .playing)
        status.group = ["Kitchen", "Living Room"]
        XCTAssertEqual(try Message(Message.status(status).frame()), .status(status))
        let long = String(repeating: "x", count: 5000)
        for group in [[], Array(repeating: "a", count: 17), [long]] {
            request.group = group
            assertRejected(Message.play(request).frame(), .malformedMessage)
        }
        status.group = [long]
        assertRejected(Message.status(status).frame(), .malformedMessage)
    }

    func testUnknownTypeIsRejected() {
        assertRejected(Frame(type: 200, payload: Array("{}".utf8)), .unknownMessageType)
    }

    func testGarbagePayloadIsRejected() {
        assertRejected(Frame(type: MessageType.hello.rawValue, payload: [0xFF, 0x00, 0x13]), .malformedMessage)
        assertRejected(Frame(type: MessageType.statusRequest.rawValue, payload: Array("[1,2]".utf8)), .malformedMessage)
    }

    func testMissingKeyIsRejected() {
        assertRejected(
            Frame(type: MessageType.hello.rawValue, payload: Array(#"{"version":1}"#.utf8)), .malformedMessage)
    }

    func testUnknownPlaybackStateIsRejected() {
        let json = #"{"name":"a","id":"b","state":"dancing"}"#
        assertRejected(Frame(type: MessageType.status.rawValue, payload: Array(json.utf8)), .malformedMessage)
    }

    func testOverlongTextIsRejected() {
        let long = String(repeating: "x", count: maximumTextLength + 1)
        let frame = Message.hello(Hello(name: long, software: "s")).frame()
        assertRejected(frame, .malformedMessage)
    }

    private func assertRejected(_ frame: Frame, _ code: ProtocolError.Code, line: UInt = #line) {
        XCTAssertThrowsError(try Message(frame), line: line) { error in
            XCTAssertEqual((error as? ProtocolError)?.code, code, line: line)
        }
    }

    /// Stamps are CLOCK_MONOTONIC nanoseconds as JSON integers: exact up to Int64's range, never negative, a reply
    /// never leaving before its request arrived; anything else (a fraction, a string, beyond 64 bits) is malformed.
    func testTimeMessagesCarryExactNanosecondsAndAreBounded() throws {
        let reply = Message.timeReply(TimeReply(sent: 9_223_372_036_854_775_807, received: 5, replied: 6))
        XCTAssertEqual(
            String(decoding: reply.frame().payload, as: UTF8.self),
            #"{"received":5,"replied":6,"sent":9223372036854775807}"#)
        for json in [#"{"sent":-1}"#, #"{"sent":1.5}"#, #"{"sent":"1"}"#, #"{"sent":9223372036854775808}"#, #"{}"#] {
            assertRejected(Frame(type: MessageType.timeRequest.rawValue, payload: Array(json.utf8)), .malformedMessage)
        }
        for json in [
            #"{"sent":1,"received":5,"replied":4}"#, #"{"sent":-1,"received":5,"replied":6}"#,
            #"{"sent":1,"received":-5,"replied":6}"#, #"{"sent":1,"received":5}"#,
        ] {
            assertRejected(Frame(type: MessageType.timeReply.rawValue, payload: Array(json.utf8)), .malformedMessage)
        }
    }

    func testThumbnailMessagesAreBounded() throws {
        let tooMany = (0...ThumbnailRequest.maximumTimes).map { "\($0)" }.joined(separator: ",")
        for json in [
            #"{"request":1,"times":[],"exact":true}"#, #"{"request":1,"times":[\#(tooMany)],"exact":true}"#,
            #"{"request":1,"times":[-1],"exact":true}"#, #"{"request":1,"times":[1e8],"exact":true}"#,
            #"{"request":1,"times":[1],"exact":true,"maxWidth":8}"#,
            #"{"request":1,"times":[1],"exact":true,"maxWidth":4000}"#, #"{"request":-1,"times":[1],"exact":true}"#,
        ] {
            assertRejected(
                Frame(type: MessageType.thumbnailRequest.rawValue, payload: Array(json.utf8)), .malformedMessage)
        }
        let tooLong = String(repeating: "A", count: (ThumbnailPart.maximumPartBytes + 2) / 3 * 4 + 4)
        for json in [
            #"{"request":1,"index":0,"time":1,"part":0,"parts":1,"data":"not base64!"}"#,
            #"{"request":1,"index":0,"time":1,"part":0,"parts":1,"data":"\#(tooLong)"}"#,
            #"{"request":1,"index":0,"time":1,"actualTime":1,"width":2,"height":2,"part":2,"parts":2,"data":"AA=="}"#,
            #"{"request":1,"index":0,"time":1,"actualTime":1,"width":2,"height":2,"part":0,"parts":65,"data":"AA=="}"#,
            #"{"request":1,"index":40,"time":1,"actualTime":1,"width":2,"height":2,"part":0,"parts":1,"data":"AA=="}"#,
            #"{"request":1,"index":0,"time":1,"actualTime":1,"width":0,"height":2,"part":0,"parts":1,"data":"AA=="}"#,
            #"{"request":1,"index":0,"time":1,"part":0,"parts":1,"data":""}"#,
            #"{"request":1,"index":0,"time":1,"part":0,"parts":1,"data":"AA==","error":"x"}"#,
        ] {
            assertRejected(Frame(type: MessageType.thumbnail.rawValue, payload: Array(json.utf8)), .malformedMessage)
        }
        // The largest part stays well inside the control connection's frame limit.
        let largest = Message.thumbnail(
            ThumbnailPart(
                request: .max, index: ThumbnailRequest.maximumTimes - 1, time: 1e7, actualTime: -1e7, width: 8192,
                height: 8192, part: ThumbnailPart.maximumParts - 2, parts: ThumbnailPart.maximumParts,
                data: Array(repeating: 0xFF, count: ThumbnailPart.maximumPartBytes))
        ).frame()
        XCTAssertLessThan(largest.encoded().count, FrameDecoder.defaultMaximumFrameLength - 8 * 1024)
        // A PNG is cut into parts that join back into it.
        let png = (0..<(ThumbnailPart.maximumPartBytes * 2 + 5)).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let parts = ThumbnailPart.parts(of: png, request: 3, index: 2, time: 4, actualTime: 4, width: 10, height: 10)
        XCTAssertEqual(parts.map(\.part), [0, 1, 2])
        XCTAssertTrue(parts.allSatisfy { $0.parts == 3 })
        XCTAssertEqual(parts.flatMap(\.data), png)
        for part in parts { XCTAssertEqual(try Message(Message.thumbnail(part).frame()), .thumbnail(part)) }
    }
}

final class ServiceRecordTests: XCTestCase {
    func testTXTRoundTrip() {
        let record = ServiceRecord(id: "abcd", friendlyName: "Living Room", features: [.audio, .video], auth: .none)
        XCTAssertEqual(record.txt, ["v": "1", "id": "abcd", "fn": "Living Room", "ft": "0x3", "auth": "none"])
        XCTAssertEqual(ServiceRecord(txt: record.txt), record)
        // castd's: bit 4 says it tells where a lone playback is anchored (`anchor`).
        let castd = ServiceRecord(
            id: "abcd", friendlyName: "x", features: [.audio, .video, .mediaConnection, .url, .anchor], auth: .none)
        XCTAssertEqual(castd.txt["ft"], "0x1F")
        XCTAssertEqual(ServiceRecord(txt: castd.txt)?.features.contains(.anchor), true)
    }

    func testIncompleteOrMalformedTXTIsNotAReceiver() {
        let good = ["v": "1", "id": "abcd", "fn": "x", "ft": "0x3", "auth": "pin"]
        XCTAssertNotNil(ServiceRecord(txt: good))
        for key in ["v", "id", "ft", "auth"] {
            var txt = good
            txt[key] = nil
            XCTAssertNil(ServiceRecord(txt: txt), key)
        }
        XCTAssertNil(ServiceRecord(txt: good.merging(["ft": "3"]) { $1 }))
        XCTAssertNil(ServiceRecord(txt: good.merging(["auth": "maybe"]) { $1 }))
        XCTAssertNil(ServiceRecord(txt: good.merging(["v": "one"]) { $1 }))
    }
}

final class PlaybackEventJSONTests: XCTestCase {
    func testEveryEventHasItsJSONLine() {
        let lines: [(PlaybackEvent, String)] = [
            (
                .loadState([.playable, .playthroughOK]),
                #"{"event":"loadState","loadState":["playable","playthroughOK"]}"#
            ),
            (.durationAvailable(5), #"{"duration":5,"event":"durationAvailable"}"#),
            (.mediaTypes([.audio, .video]), #"{"event":"mediaTypes","mediaTypes":["audio","video"]}"#),
            (.naturalSize(width: 320, height: 240), #"{"event":"naturalSize","height":240,"width":320}"#),
            (.readyForDisplay, #"{"event":"readyForDisplay"}"#),
            (.playbackState(.seekingForward), #"{"event":"playbackState","state":"seekingForward"}"#),
            (.position(seconds: 1.5, at: 100), #"{"at":100,"event":"position","position":1.5}"#),
            (.videoActive(true), #"{"active":true,"event":"videoActive"}"#),
            (.finished(reason: .playbackEnded, error: nil), #"{"event":"finished","reason":"playbackEnded"}"#),
            (
                .finished(reason: .playbackError, error: "x"),
                #"{"error":"x","event":"finished","reason":"playbackError"}"#
            ),
            (
                .finished(reason: .playbackError, error: "bye", code: .receiverShutdown),
                #"{"code":"receiverShutdown","error":"bye","event":"finished","reason":"playbackError"}"#
            ),
        ]
        for (event, line) in lines {
            XCTAssertEqual(event.jsonLine, line)
            XCTAssertEqual(try JSONDecoder().decode(PlaybackEvent.self, from: Data(line.utf8)), event)
        }
    }

    /// The finish code is an addition: a code this version does not know is no code, and the reason still counts.
    func testAnUnknownFinishCodeDecodesAsNone() throws {
        let line = #"{"code":"receiverExploded","error":"x","event":"finished","reason":"playbackError"}"#
        XCTAssertEqual(
            try JSONDecoder().decode(PlaybackEvent.self, from: Data(line.utf8)),
            .finished(reason: .playbackError, error: "x"))
    }

    func testUnknownEventsAndWordsAreRejected() {
        for line in [#"{"event":"dance"}"#, #"{"event":"loadState","loadState":["full"]}"#, #"{"state":"playing"}"#] {
            XCTAssertThrowsError(try JSONDecoder().decode(PlaybackEvent.self, from: Data(line.utf8)), line)
        }
    }
}

/// Play requests for an http(s) URL the receiver opens itself.
final class PlayURLMessageTests: XCTestCase {
    private func frame(_ json: String) -> Frame { Frame(type: MessageType.play.rawValue, payload: Array(json.utf8)) }

    private func assertMalformed(_ json: String, line: UInt = #line) {
        XCTAssertThrowsError(try Message(frame(json)), json, line: line) { error in
            XCTAssertEqual((error as? ProtocolError)?.code, .malformedMessage, json, line: line)
            // The refusal never echoes a credential.
            XCTAssertFalse((error as? ProtocolError)?.message.contains("s3cret") ?? true, line: line)
        }
    }

    func testURLRequestsRoundTrip() throws {
        let requests = [
            PlayRequest(title: "http://10.0.0.2:8000/clip.mp4", url: "http://10.0.0.2:8000/clip.mp4"),
            PlayRequest(
                title: "stream", url: "HTTPS://cdn.example.com/live/index.m3u8?token=a%20b#x", username: "alice",
                password: "p@ss:w%rd 🎬", startTime: 3),
            PlayRequest(title: "x", url: "https://[::1]:8443/x.ts", username: "bob"),
            PlayRequest(title: "x", url: "http://h/" + String(repeating: "a", count: PlayRequest.maximumURLLength - 9)),
        ]
        for request in requests {
            XCTAssertEqual(try Message(Message.play(request).frame()), .play(request))
        }
        let json = String(decoding: Message.play(requests[0]).frame().payload, as: UTF8.self)
        XCTAssertEqual(json, #"{"title":"http://10.0.0.2:8000/clip.mp4","url":"http://10.0.0.2:8000/clip.mp4"}"#)
        // A file request still has no url, and decodes from the JSON senders have always sent.
        let file = try Message(frame(#"{"title":"a.mp4","media":{"size":5,"seekable":true}}"#))
        XCTAssertEqual(
            file, .play(PlayRequest(title: "a.mp4", media: MediaDescriptor(size: 5, seekable: true, nameHint: nil))))
        XCTAssertFalse("\(requests[1])".contains("p@ss"), "\(requests[1])")
    }

    func testOtherSchemesAndBadURLsAreMalformed() {
        let long = "http://h/" + String(repeating: "a", count: PlayRequest.maximumURLLength - 8)
        for url in [
            "file:///etc/passwd", "FILE:///etc/passwd", "concat:/etc/passwd|/etc/hostname",
            "subfile:,,start,0,end,9,,:/x",
            "data:video/mp4;base64,AAAA", "pipe:0", "/etc/passwd", "hls+http://h/x.m3u8", "ftp://h/x.mp4", "rtmp://h/x",
            "tcp://h:1", "httpx://h/x", "http:/h/x", "http://", "http:///x", "http://h/a b", "http://h/\r\nHost: evil",
            "http://h/caf\u{E9}", "http://alice:s3cret@h/x.mp4", "http://alice@h/x", "", long,
        ] {
            let body = String(decoding: try! JSONEncoder().encode(["title": "x", "url": url]), as: UTF8.self)
            assertMalformed(body)
        }
    }

    func testExactlyOneOfMediaAndURLAndCredentialsOnlyWithAURL() {
        for json in [
            #"{"title":"x"}"#,
            #"{"title":"x","url":"http://h/x","media":{"size":5,"seekable":true}}"#,
            #"{"title":"x","media":{"size":5,"seekable":true},"username":"a","password":"s3cret"}"#,
            #"{"title":"x","url":"http://h/x","password":"s3cret"}"#,
            #"{"title":"x","url":"http://h/x","username":"a:b","password":"s3cret"}"#,
            #"{"title":"x","url":"http://h/x","username":"a","password":""#
                + String(repeating: "p", count: maximumTextLength + 1) + #""}"#,
            #"{"title":"x","url":7}"#,
        ] {
            assertMalformed(json)
        }
    }
}
