import CastBase
import CastProtocol
import Foundation

/// One message on the channel between castd and a session's decoder worker (docs/decoder-worker.md).
///
/// The channel is a stream socket cut into the wire protocol's frames (4-byte length, type byte, payload) by a
/// `FrameDecoder` with a bound per direction. The payloads reuse the wire messages' codecs, checks included
/// (`Message.event`, `Message.mediaRead`, ...), so a worker's message is judged by the same rules as a sender's.
/// Value in, value out: no I/O here.
enum WorkerMessage: Sendable, Equatable {
    // castd → worker
    /// What to hide from the worker before it confines itself for good (the first message, once).
    case confine(WorkerSandbox)
    /// What to play and how (once, after `confined`).
    case start(WorkerStart)
    /// A control for the engine: pause, resume, seek, volume, mute, rate, scaling, accessLog, stop.
    case control(PlaybackControl)
    /// The answer to a `read`: the bytes at its offset (none at the end of the media).
    case data(MediaData)
    /// The answer to a `read` that failed (the sender lost, a stream that cannot seek).
    case readFailed(String)
    /// Thumbnail workers only: images to make, numbered by castd (see `ThumbnailProcess`).
    case thumbnailRequest(ThumbnailRequest)
    /// Thumbnail workers only: answer every time not answered yet with `cancelled`.
    case thumbnailCancel
    // worker → castd
    /// What the worker's sandbox came to (the answer to `confine`, once).
    case confined(SandboxReport)
    /// The engine wants bytes of the served media.
    case read(MediaRead)
    /// An engine event, as the engine emitted it.
    case event(PlaybackEvent)
    /// An event castd cannot take for one of its values (a known event, every field of the right type, one value out
    /// of its range: a timing value that crossed a limit, say): castd logs `reason` and drops it, the worker goes on.
    /// Made only by decoding; never sent.
    case unacceptableEvent(reason: String)
    /// Thumbnail workers only: one part of the answer to one time of a `thumbnailRequest`.
    case thumbnail(ThumbnailPart)

    /// The type byte of each message. Explicit values, never reused.
    enum Kind: UInt8 {
        case start = 1
        case control = 2
        case data = 3
        case readFailed = 4
        case thumbnailRequest = 5
        case thumbnailCancel = 6
        case confine = 7
        case read = 10
        case event = 11
        case thumbnail = 12
        case confined = 13
    }

    /// The longest frame castd accepts from a worker: events are small (they reach senders in control frames of
    /// this size), and so is a read request.
    static let maximumFromWorker = FrameDecoder.defaultMaximumFrameLength
    /// The longest frame a worker accepts from castd: media data of the largest read.
    static let maximumToWorker = MediaData.maximumFrameLength
    /// The longest `readFailed` message.
    static let maximumMessageLength = maximumTextLength

    var kind: Kind {
        switch self {
        case .start: .start
        case .control: .control
        case .data: .data
        case .readFailed: .readFailed
        case .thumbnailRequest: .thumbnailRequest
        case .thumbnailCancel: .thumbnailCancel
        case .read: .read
        case .event, .unacceptableEvent: .event
        case .thumbnail: .thumbnail
        case .confine: .confine
        case .confined: .confined
        }
    }

    /// Whether the worker sends this message (castd sends the others).
    var isFromWorker: Bool { kind == .read || kind == .event || kind == .thumbnail || kind == .confined }

    /// The message as a frame.
    func frame() -> Frame {
        let payload: [UInt8]
        switch self {
        case .start(let start): payload = Self.encodeJSON(start)
        case .confine(let sandbox): payload = Self.encodeJSON(sandbox)
        case .confined(let report): payload = Self.encodeJSON(report)
        case .control(let control): payload = Message.control(control).frame().payload
        case .data(let data): payload = Message.mediaData(data).frame().payload
        case .readFailed(let message):
            payload =
                Message.error(
                    ErrorMessage(code: .readFailed, message: String(message.prefix(Self.maximumMessageLength)))
                )
                .frame().payload
        case .read(let read): payload = Message.mediaRead(read).frame().payload
        case .event(let event): payload = Message.event(event).frame().payload
        case .unacceptableEvent: preconditionFailure("an unacceptable event is what castd decoded, never sent")
        case .thumbnailRequest(let request): payload = Message.thumbnailRequest(request).frame().payload
        case .thumbnailCancel: payload = Message.thumbnailCancel.frame().payload
        case .thumbnail(let part): payload = Message.thumbnail(part).frame().payload
        }
        return Frame(type: kind.rawValue, payload: payload)
    }

    /// The frame's wire bytes.
    func encoded() -> [UInt8] { frame().encoded() }

    /// Decodes a frame that came from a session's worker: only `read` and `event`, each checked as the wire protocol
    /// checks it.
    /// - Throws: `ProtocolError` for anything else; castd then ends the worker.
    /// An event outside what an engine emits (`isEngineEvent`: a `joinRequest`, say, which castd makes from a
    /// sender's control and passes on to the session's sender only) is dropped as `unacceptableEvent`: a worker that
    /// a hostile file took over must not speak for castd to the sender.
    static func fromWorker(_ frame: Frame) throws(ProtocolError) -> WorkerMessage {
        let message = try decode(frame)
        guard message.kind == .read || message.kind == .event else {
            throw ProtocolError(.unexpectedMessage, "a worker may not send message type \(frame.type)")
        }
        if case .event(let event) = message, !isEngineEvent(event) {
            return .unacceptableEvent(reason: "not an engine's event: \(event.name)")
        }
        return message
    }

    /// Whether an engine emits `event`: all but the requests castd passes on from other senders' controls. Every
    /// case is listed, so that a new event is let through from a worker only by a decision made here.
    static func isEngineEvent(_ event: PlaybackEvent) -> Bool {
        switch event {
        case .loadState, .durationAvailable, .mediaTypes, .naturalSize, .readyForDisplay, .playbackState, .position,
            .videoActive, .volume, .rate, .buffered, .accessLog, .errorLog, .metadata, .tracks, .sync, .scheduledStart,
            .finished:
            true
        case .joinRequest, .skipRequest, .moveRequest:
            false
        }
    }

    /// Decodes a frame that came from a worker that was just started: only `confined`, the answer to `confine`.
    static func fromConfiningWorker(_ frame: Frame) throws(ProtocolError) -> WorkerMessage {
        let message = try decode(frame)
        guard message.kind == .confined else {
            throw ProtocolError(
                .unexpectedMessage, "a worker that confines itself may not send message type \(frame.type)")
        }
        return message
    }

    /// Decodes a frame that came from a thumbnail worker: only `read` and `thumbnail`.
    static func fromThumbnailWorker(_ frame: Frame) throws(ProtocolError) -> WorkerMessage {
        let message = try decode(frame)
        guard message.kind == .read || message.kind == .thumbnail else {
            throw ProtocolError(.unexpectedMessage, "a thumbnail worker may not send message type \(frame.type)")
        }
        return message
    }

    /// Decodes a frame that came from castd: `confine`, `start`, `control`, `data`, `readFailed` and the thumbnail
    /// requests.
    static func fromCastd(_ frame: Frame) throws(ProtocolError) -> WorkerMessage {
        let message = try decode(frame)
        guard !message.isFromWorker else {
            throw ProtocolError(.unexpectedMessage, "castd does not send message type \(frame.type)")
        }
        return message
    }

    private static func decode(_ frame: Frame) throws(ProtocolError) -> WorkerMessage {
        guard let kind = Kind(rawValue: frame.type) else {
            throw ProtocolError(.unknownMessageType, "unknown worker message type \(frame.type)")
        }
        func wire(_ type: MessageType) throws(ProtocolError) -> Message {
            try Message(Frame(type: type.rawValue, payload: frame.payload))
        }
        switch kind {
        case .start:
            do {
                return .start(try JSONDecoder().decode(WorkerStart.self, from: Data(frame.payload)))
            } catch {
                throw ProtocolError(.malformedMessage, "start payload does not decode")
            }
        case .confine:
            guard let sandbox = try? JSONDecoder().decode(WorkerSandbox.self, from: Data(frame.payload)),
                sandbox.isValid
            else { throw ProtocolError(.malformedMessage, "confine payload does not decode") }
            return .confine(sandbox)
        case .confined:
            guard let report = try? JSONDecoder().decode(SandboxReport.self, from: Data(frame.payload)),
                report.isValid
            else { throw ProtocolError(.malformedMessage, "confined payload does not decode") }
            return .confined(report)
        case .control:
            guard case .control(let control) = try wire(.control) else { break }
            return .control(control)
        case .data:
            guard case .mediaData(let data) = try wire(.mediaData) else { break }
            guard data.bytes.count <= MediaRead.maximumLength else {
                throw ProtocolError(.malformedMessage, "data longer than the longest read")
            }
            return .data(data)
        case .readFailed:
            guard case .error(let error) = try wire(.error) else { break }
            return .readFailed(String(error.message.prefix(maximumMessageLength)))
        case .read:
            guard case .mediaRead(let read) = try wire(.mediaRead) else { break }
            return .read(read)
        case .event:
            do throws(ProtocolError) {
                guard case .event(let event) = try wire(.event) else { break }
                return .event(event)
            } catch {
                guard let reason = valueOutOfRange(in: frame.payload) else { throw error }
                return .unacceptableEvent(reason: reason)
            }
        case .thumbnailRequest:
            guard case .thumbnailRequest(let request) = try wire(.thumbnailRequest) else { break }
            return .thumbnailRequest(request)
        case .thumbnailCancel:
            guard case .thumbnailCancel = try wire(.thumbnailCancel) else { break }
            return .thumbnailCancel
        case .thumbnail:
            guard case .thumbnail(let part) = try wire(.thumbnail) else { break }
            return .thumbnail(part)
        }
        throw ProtocolError(.malformedMessage, "worker message type \(frame.type) does not decode")
    }

    /// Why an event that does not decode is only a value out of its range (its `event` word known, every field of
    /// its type, one value beyond what the protocol accepts), or nil for anything else (not JSON, an unknown event, a
    /// field of the wrong type or missing: the worker broke the channel's rules).
    private static func valueOutOfRange(in payload: [UInt8]) -> String? {
        do {
            _ = try JSONDecoder().decode(PlaybackEvent.self, from: Data(payload))
            return nil
        } catch DecodingError.dataCorrupted(let context) {
            guard let key = context.codingPath.first?.stringValue, key != "event" else { return nil }
            return printable(
                "bad value at '\(context.codingPath.map(\.stringValue).joined(separator: "."))': "
                    + String(context.debugDescription.prefix(maximumMessageLength)))
        } catch {
            return nil
        }
    }

    private static func encodeJSON(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            return Array(try encoder.encode(value))
        } catch {
            preconditionFailure("encoding a worker message cannot fail: \(error)")
        }
    }
}
