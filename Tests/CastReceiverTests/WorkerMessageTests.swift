import CastMedia
import CastProtocol
import XCTest

@testable import CastReceiver

/// The decoder worker's channel as values: every message survives framing both ways, each side accepts only what
/// the other may send, and nothing a worker sends can exceed the bounds castd sets.
final class WorkerMessageTests: XCTestCase {
    private enum Fixtures {
        static let start = WorkerStart(
            media: WorkerStart.Media(size: 1234, seekable: true, nameHint: "clip.mp4"), url: nil,
            configuration: PlayerConfiguration(audio: .alsa(device: "hw:0"), video: .framemd5(path: "/tmp/f.md5")),
            volume: 0.5, muted: true, limits: DecoderLimits())
        static let fromCastd: [WorkerMessage] = [
            .confine(WorkerSandbox(hiddenPaths: ["/var/lib/castd"])), .start(start),
            .control(PlaybackControl(.seek(position: 12.5, exact: true))),
            .control(PlaybackControl(.scaling(.aspectFill))), .data(MediaData(offset: 1 << 40, bytes: [1, 2, 3])),
            .data(MediaData(offset: 0, bytes: [])), .readFailed("the sender closed the media connection"),
        ]
        static let confined: [WorkerMessage] = [
            .confined(SandboxReport()), .confined(SandboxReport(mountProblem: "unshare: EPERM", filterProblem: nil)),
        ]
        static let fromWorker: [WorkerMessage] = [
            .read(MediaRead(offset: 0, length: MediaRead.maximumLength)), .event(.playbackState(.playing)),
            .event(.position(seconds: 1.5, at: 1_700_000_000)),
            .event(.finished(reason: .playbackError, error: "boom")),
        ]
    }

    /// Feeds `bytes` to a decoder of `limit` and decodes every frame with `decode`.
    private func decodeAll(
        _ bytes: [UInt8], limit: Int, _ decode: (Frame) throws(ProtocolError) -> WorkerMessage
    ) throws -> [WorkerMessage] {
        var decoder = FrameDecoder(maximumFrameLength: limit)
        decoder.feed(bytes)
        var messages: [WorkerMessage] = []
        while let frame = try decoder.nextFrame() { messages.append(try decode(frame)) }
        XCTAssertFalse(decoder.hasPartialFrame)
        return messages
    }

    func testEveryMessageSurvivesTheChannelInItsDirection() throws {
        let toWorker = Fixtures.fromCastd.flatMap { $0.encoded() }
        XCTAssertEqual(
            try decodeAll(toWorker, limit: WorkerMessage.maximumToWorker, WorkerMessage.fromCastd), Fixtures.fromCastd)
        let toCastd = Fixtures.fromWorker.flatMap { $0.encoded() }
        XCTAssertEqual(
            try decodeAll(toCastd, limit: WorkerMessage.maximumFromWorker, WorkerMessage.fromWorker),
            Fixtures.fromWorker)
    }

    func testEachSideRefusesWhatOnlyItMaySend() {
        for message in Fixtures.fromCastd {
            XCTAssertThrowsError(try WorkerMessage.fromWorker(message.frame()), "\(message.kind)") { error in
                XCTAssertEqual((error as? ProtocolError)?.code, .unexpectedMessage)
            }
        }
        for message in Fixtures.fromWorker {
            XCTAssertThrowsError(try WorkerMessage.fromCastd(message.frame()), "\(message.kind)") { error in
                XCTAssertEqual((error as? ProtocolError)?.code, .unexpectedMessage)
            }
        }
        XCTAssertThrowsError(try WorkerMessage.fromWorker(Frame(type: 99, payload: []))) { error in
            XCTAssertEqual((error as? ProtocolError)?.code, .unknownMessageType)
        }
    }

    /// A thumbnail worker's messages: castd sends requests and cancels (and a start saying `thumbnails`); the worker
    /// sends reads and parts, which a session's worker may not, and the largest part fits the worker's bound.
    func testThumbnailMessagesGoOnlyWhereTheyBelong() throws {
        var start = Fixtures.start
        start.thumbnails = true
        let toWorker: [WorkerMessage] = [
            .start(start),
            .thumbnailRequest(ThumbnailRequest(request: 7, times: [1.5, 30], exact: true, maxWidth: 640)),
            .thumbnailCancel,
        ]
        XCTAssertEqual(
            try decodeAll(
                toWorker.flatMap { $0.encoded() }, limit: WorkerMessage.maximumToWorker, WorkerMessage.fromCastd),
            toWorker)
        let largest = WorkerMessage.thumbnail(
            ThumbnailPart(
                request: .max, index: ThumbnailRequest.maximumTimes - 1, time: 1e7, actualTime: 1e7, width: 8192,
                height: 8192, part: ThumbnailPart.maximumParts - 1, parts: ThumbnailPart.maximumParts,
                data: [UInt8](repeating: 0xff, count: ThumbnailPart.maximumPartBytes)))
        let failed = WorkerMessage.thumbnail(ThumbnailPart(request: 1, index: 0, time: 0, error: "cancelled"))
        let fromWorker: [WorkerMessage] = [.read(MediaRead(offset: 0, length: 4096)), largest, failed]
        XCTAssertLessThan(largest.encoded().count, WorkerMessage.maximumFromWorker)
        XCTAssertEqual(
            try decodeAll(
                fromWorker.flatMap { $0.encoded() }, limit: WorkerMessage.maximumFromWorker,
                WorkerMessage.fromThumbnailWorker),
            fromWorker)
        for message in [largest, failed] + toWorker {
            XCTAssertThrowsError(try WorkerMessage.fromWorker(message.frame()), "\(message.kind)")
        }
        for message in Fixtures.fromWorker.filter({ $0.kind == .event }) + toWorker {
            XCTAssertThrowsError(try WorkerMessage.fromThumbnailWorker(message.frame()), "\(message.kind)")
        }
        // A part outside the protocol's bounds is refused as a sender's would be.
        var bad = ThumbnailPart(request: 1, index: 0, time: 0, error: "x")
        bad.parts = ThumbnailPart.maximumParts + 1
        XCTAssertThrowsError(try WorkerMessage.fromThumbnailWorker(WorkerMessage.thumbnail(bad).frame()))
    }

    /// A worker that announces a huge frame costs castd four bytes: the length prefix alone is refused.
    func testAnOversizedFrameFromAWorkerIsRefusedByItsLengthPrefix() {
        let length = UInt32(WorkerMessage.maximumFromWorker + 1)
        var decoder = FrameDecoder(maximumFrameLength: WorkerMessage.maximumFromWorker)
        decoder.feed([UInt8(length >> 24), UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff)])
        XCTAssertThrowsError(try decoder.nextFrame()) { error in
            XCTAssertEqual((error as? ProtocolError)?.code, .frameTooLarge)
        }
        // The largest read's data fits the worker's bound exactly.
        let data = WorkerMessage.data(
            MediaData(offset: 7, bytes: [UInt8](repeating: 9, count: MediaRead.maximumLength)))
        XCTAssertEqual(data.encoded().count - Frame.headerSize, WorkerMessage.maximumToWorker)
        XCTAssertEqual(
            try? decodeAll(data.encoded(), limit: WorkerMessage.maximumToWorker, WorkerMessage.fromCastd), [data])
    }

    /// What a compromised worker might say instead of a read or an event is refused, not trusted.
    func testMalformedWorkerMessagesAreRefused() {
        let bad: [Frame] = [
            Frame(type: WorkerMessage.Kind.read.rawValue, payload: Array(#"{"offset":-1,"length":10}"#.utf8)),
            Frame(type: WorkerMessage.Kind.read.rawValue, payload: Array(#"{"offset":0,"length":0}"#.utf8)),
            Frame(
                type: WorkerMessage.Kind.read.rawValue,
                payload: Array(#"{"offset":0,"length":\#(MediaRead.maximumLength + 1)}"#.utf8)),
            Frame(type: WorkerMessage.Kind.event.rawValue, payload: Array(#"{"event":"selfDestruct"}"#.utf8)),
            Frame(
                type: WorkerMessage.Kind.event.rawValue,
                payload: Array(#"{"event":"position","position":"x","at":1}"#.utf8)),
            Frame(type: WorkerMessage.Kind.event.rawValue, payload: Array("not json".utf8)),
            Frame(type: WorkerMessage.Kind.event.rawValue, payload: []),
        ]
        for frame in bad {
            XCTAssertThrowsError(try WorkerMessage.fromWorker(frame), String(decoding: frame.payload, as: UTF8.self)) {
                error in
                XCTAssertEqual((error as? ProtocolError)?.code, .malformedMessage)
            }
        }
    }

    /// An event castd cannot take only for a value out of its range (a known event, its fields of the right types) is
    /// dropped, not a broken rule: the worker goes on playing (issue 33: a trim of −1000.0000000000009 ppm stopped
    /// it). Anything else malformed is still refused (above).
    func testAnEventWithAValueOutOfRangeIsDroppedNotRefused() throws {
        for json in [
            #"{"event":"sync","offset":0.001,"trim":-1000.0000000000009}"#, #"{"event":"sync","offset":2e7,"trim":0}"#,
            #"{"event":"buffered","playableDuration":-1,"ahead":0}"#,
        ] {
            let frame = Frame(type: WorkerMessage.Kind.event.rawValue, payload: Array(json.utf8))
            guard case .unacceptableEvent(let reason) = try WorkerMessage.fromWorker(frame) else {
                return XCTFail("\(json) was not dropped")
            }
            XCTAssertTrue(reason.hasPrefix("bad value at '"), reason)
        }
        let json = #"{"event":"sync","offset":0.001,"trim":-1000}"#
        let within = Frame(type: WorkerMessage.Kind.event.rawValue, payload: Array(json.utf8))
        XCTAssertEqual(try WorkerMessage.fromWorker(within), .event(.sync(offset: 0.001, trim: -1000)))
    }

    /// The requests castd passes on from other senders' controls (`join`, `skip`, `move`) are castd's to make: from a
    /// worker (a hostile file that took it over) each is dropped, said, and the worker goes on; an engine's events
    /// pass as they are.
    func testRequestsFromAWorkerAreDroppedNotPassedOn() throws {
        for request in [
            PlaybackEvent.joinRequest(receiver: "10.0.0.5:7100"), .moveRequest(receiver: "Attic"), .skipRequest(.next),
        ] {
            let frame = WorkerMessage.event(request).frame()
            XCTAssertEqual(
                try WorkerMessage.fromWorker(frame),
                .unacceptableEvent(reason: "not an engine's event: \(request.name)"))
        }
        for event in [PlaybackEvent.playbackState(.playing), .sync(offset: 0.001, trim: 2), .rate(1)] {
            XCTAssertEqual(try WorkerMessage.fromWorker(WorkerMessage.event(event).frame()), .event(event))
        }
    }

    /// A new worker says `confined` and nothing else; afterwards neither a session's nor a thumbnail worker may.
    func testConfinedIsANewWorkersOnlyMessage() throws {
        XCTAssertEqual(
            try decodeAll(
                Fixtures.confined.flatMap { $0.encoded() }, limit: WorkerMessage.maximumFromWorker,
                WorkerMessage.fromConfiningWorker), Fixtures.confined)
        for message in Fixtures.confined {
            XCTAssertThrowsError(try WorkerMessage.fromWorker(message.frame())) { error in
                XCTAssertEqual((error as? ProtocolError)?.code, .unexpectedMessage)
            }
            XCTAssertThrowsError(try WorkerMessage.fromThumbnailWorker(message.frame())) { error in
                XCTAssertEqual((error as? ProtocolError)?.code, .unexpectedMessage)
            }
            XCTAssertThrowsError(try WorkerMessage.fromCastd(message.frame())) { error in
                XCTAssertEqual((error as? ProtocolError)?.code, .unexpectedMessage)
            }
        }
        for message in Fixtures.fromWorker + Fixtures.fromCastd {
            XCTAssertThrowsError(try WorkerMessage.fromConfiningWorker(message.frame()), "\(message.kind)") { error in
                XCTAssertEqual((error as? ProtocolError)?.code, .unexpectedMessage)
            }
        }
    }

    /// The sandbox messages are bounded like the rest: a few absolute paths one way, short texts the other.
    func testSandboxMessagesAreBounded() {
        let tooMany = WorkerSandbox(hiddenPaths: (0...WorkerSandbox.maximumPaths).map { "/d\($0)" })
        let bad: [WorkerSandbox] = [
            tooMany, WorkerSandbox(hiddenPaths: ["relative/state"]), WorkerSandbox(hiddenPaths: ["/a\u{0}b"]),
            WorkerSandbox(hiddenPaths: ["/" + String(repeating: "x", count: WorkerSandbox.maximumPathLength)]),
        ]
        for sandbox in bad {
            XCTAssertThrowsError(try WorkerMessage.fromCastd(WorkerMessage.confine(sandbox).frame())) { error in
                XCTAssertEqual((error as? ProtocolError)?.code, .malformedMessage)
            }
        }
        let long = SandboxReport(mountProblem: String(repeating: "x", count: WorkerMessage.maximumMessageLength + 1))
        XCTAssertThrowsError(try WorkerMessage.fromConfiningWorker(WorkerMessage.confined(long).frame())) { error in
            XCTAssertEqual((error as? ProtocolError)?.code, .malformedMessage)
        }
        XCTAssertEqual(WorkerSandbox(hiding: ["/var/lib/castd"]).hiddenPaths, ["/var/lib/castd"])
        XCTAssertEqual(
            WorkerSandbox(hiding: ["state", "/etc/castd.password"]).hiddenPaths,
            [FileManager.default.currentDirectoryPath + "/state", "/etc/castd.password"])
    }

    func testAReadFailureMessageIsBounded() throws {
        let long = WorkerMessage.readFailed(String(repeating: "x", count: 10_000))
        guard case .readFailed(let text) = try WorkerMessage.fromCastd(long.frame()) else { return XCTFail() }
        XCTAssertEqual(text.count, WorkerMessage.maximumMessageLength)
    }

    /// The start message carries the engine configuration across, the window and full screen included.
    func testTheStartMessageCarriesTheConfigurationAndTheWindow() throws {
        var configuration = PlayerConfiguration(
            audio: .none, video: .framemd5(path: "/x.md5"), startTime: 3, scalingMode: .fill, autoplay: false,
            timingLog: "/t.log")
        configuration.requestDate = Date(timeIntervalSince1970: 1_700_000_000.5)
        let start = WorkerStart(
            media: nil, url: "http://u:p@host/a.m3u8", configuration: configuration, volume: 1, muted: false,
            limits: DecoderLimits())
        guard case .start(let decoded) = try WorkerMessage.fromCastd(WorkerMessage.start(start).frame()) else {
            return XCTFail()
        }
        let back = decoded.configuration
        XCTAssertEqual(back.audio, .none)
        XCTAssertEqual(back.video, .framemd5(path: "/x.md5"))
        XCTAssertEqual(back.startTime, 3)
        XCTAssertEqual(back.scalingMode, .fill)
        XCTAssertFalse(back.autoplay)
        XCTAssertEqual(back.timingLog, "/t.log")
        XCTAssertEqual(back.requestDate, configuration.requestDate)
        XCTAssertEqual(decoded.url, "http://u:p@host/a.m3u8")
        XCTAssertEqual(decoded.limits.addressSpace, 4 << 30)
        for video in [VideoOutput.window, .fullscreen, .none] {
            let start = WorkerStart(
                media: nil, url: "http://h/a",
                configuration: PlayerConfiguration(audio: .none, video: video, scalingMode: ScalingMode.none),
                volume: 1, muted: false, limits: DecoderLimits())
            guard case .start(let decoded) = try WorkerMessage.fromCastd(WorkerMessage.start(start).frame()) else {
                return XCTFail()
            }
            XCTAssertEqual(decoded.configuration.video, video)
            XCTAssertEqual(decoded.configuration.scalingMode, ScalingMode.none)
        }
    }

    /// A start message naming a window other than `window` or `fullscreen` does not decode.
    func testAStartMessageWithAnUnknownWindowIsRefused() throws {
        let start = WorkerStart(
            media: nil, url: "http://h/a", configuration: PlayerConfiguration(audio: .none, video: .window),
            volume: 1, muted: false, limits: DecoderLimits())
        let text = String(decoding: WorkerMessage.start(start).frame().payload, as: UTF8.self)
        XCTAssertTrue(text.contains(#""window":"window""#), text)
        let forged = Frame(
            type: WorkerMessage.Kind.start.rawValue,
            payload: Array(text.replacingOccurrences(of: #""window":"window""#, with: #""window":"kiosk""#).utf8))
        XCTAssertThrowsError(try WorkerMessage.fromCastd(forged))
    }

    /// `sendData` writes the bytes from the caller's memory, and they arrive as exactly the frame `send(.data)` writes.
    func testSendDataIsTheDataFrame() throws {
        let (one, other) = try WorkerChannel.socketPair()
        let sender = WorkerChannel(fd: one, incoming: WorkerMessage.maximumFromWorker, decode: WorkerMessage.fromWorker)
        let receiver = WorkerChannel(
            fd: other, incoming: WorkerMessage.maximumToWorker, decode: WorkerMessage.fromCastd)
        let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let reading = Thread {
            try? bytes.withUnsafeBytes { try sender.sendData(offset: 1 << 33, bytes: $0) }
            try? sender.send(.data(MediaData(offset: 5, bytes: [9])))
        }
        reading.start()
        XCTAssertEqual(try receiver.receive(), .data(MediaData(offset: 1 << 33, bytes: bytes)))
        XCTAssertEqual(try receiver.receive(), .data(MediaData(offset: 5, bytes: [9])))
        var encoded: [UInt8] = []
        let (a, b) = try WorkerChannel.socketPair()
        let writer = WorkerChannel(fd: a, incoming: WorkerMessage.maximumFromWorker, decode: WorkerMessage.fromWorker)
        try [UInt8]([1, 2, 3]).withUnsafeBytes { try writer.sendData(offset: 7, bytes: $0) }
        var chunk = [UInt8](repeating: 0, count: 64)
        let count = chunk.withUnsafeMutableBytes { recv(b, $0.baseAddress, $0.count, 0) }
        encoded = Array(chunk[0..<count])
        close(b)
        XCTAssertEqual(encoded, WorkerMessage.data(MediaData(offset: 7, bytes: [1, 2, 3])).encoded())
    }
}
