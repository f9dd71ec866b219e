import FoundationEssentials

/// A decoded message.
public enum Message: Sendable, Equatable {
    /// See `Hello`.
    case hello(Hello)
    /// See `Welcome`.
    case welcome(Welcome)
    /// Asks for a `status`.
    case statusRequest
    /// See `ReceiverStatus`.
    case status(ReceiverStatus)
    /// See `ErrorMessage`.
    case error(ErrorMessage)
    /// See `PlayRequest`.
    case play(PlayRequest)
    /// See `PlayAccepted`.
    case playAccepted(PlayAccepted)
    /// See `PlaybackEvent`.
    case event(PlaybackEvent)
    /// See `PlaybackControl`.
    case control(PlaybackControl)
    /// See `MediaHello`.
    case mediaHello(MediaHello)
    /// See `MediaRead`.
    case mediaRead(MediaRead)
    /// See `MediaData`.
    case mediaData(MediaData)
    /// Subscribe to the receiver's events.
    case watch
    /// See `ThumbnailRequest`.
    case thumbnailRequest(ThumbnailRequest)
    /// Cancel every thumbnail request of this connection not answered yet.
    case thumbnailCancel
    /// See `ThumbnailPart`.
    case thumbnail(ThumbnailPart)
    /// See `TimeRequest`.
    case timeRequest(TimeRequest)
    /// See `TimeReply`.
    case timeReply(TimeReply)
    /// A pairing message (types 30–39), see `PairingMessage`.
    case pairing(PairingMessage)

    /// The message's wire type.
    public var type: MessageType {
        switch self {
        case .hello: .hello
        case .welcome: .welcome
        case .statusRequest: .statusRequest
        case .status: .status
        case .error: .error
        case .play: .play
        case .playAccepted: .playAccepted
        case .event: .event
        case .control: .control
        case .mediaHello: .mediaHello
        case .mediaRead: .mediaRead
        case .mediaData: .mediaData
        case .watch: .watch
        case .thumbnailRequest: .thumbnailRequest
        case .thumbnailCancel: .thumbnailCancel
        case .thumbnail: .thumbnail
        case .timeRequest: .timeRequest
        case .timeReply: .timeReply
        case .pairing(let message): MessageType(pairing: message.type)
        }
    }
}

/// The longest string accepted in any text field: names, titles, messages.
public let maximumTextLength = 1024

extension Message {
    /// The message as a frame.
    public func frame() -> Frame {
        let payload: [UInt8]
        switch self {
        case .hello(let body): payload = JSONPayload.encode(body)
        case .welcome(let body): payload = JSONPayload.encode(body)
        case .statusRequest, .watch, .thumbnailCancel: payload = Array("{}".utf8)
        case .thumbnailRequest(let body): payload = JSONPayload.encode(body)
        case .thumbnail(let body): payload = JSONPayload.encode(body)
        case .timeRequest(let body): payload = JSONPayload.encode(body)
        case .timeReply(let body): payload = JSONPayload.encode(body)
        case .status(let body): payload = JSONPayload.encode(body)
        case .error(let body): payload = JSONPayload.encode(body)
        case .play(let body): payload = JSONPayload.encode(body)
        case .playAccepted(let body): payload = JSONPayload.encode(body)
        case .event(let body): payload = JSONPayload.encode(body)
        case .control(let body): payload = JSONPayload.encode(body)
        case .mediaHello(let body): payload = JSONPayload.encode(body)
        case .mediaRead(let body): payload = body.canonicalPayload
        case .pairing(let body): return body.frame()
        case .mediaData(let body):
            payload = withUnsafeBytes(of: UInt64(bitPattern: body.offset).bigEndian) { Array($0) } + body.bytes
        }
        return Frame(type: type.rawValue, payload: payload)
    }

    /// Decodes and validates a frame.
    /// - Throws: `ProtocolError` `.unknownMessageType` or `.malformedMessage`.
    public init(_ frame: Frame) throws(ProtocolError) {
        guard let type = MessageType(rawValue: frame.type) else {
            throw ProtocolError(.unknownMessageType, "unknown message type \(frame.type)")
        }
        if PairingMessageType(rawValue: frame.type) != nil {
            self = .pairing(try PairingMessage(frame))
            return
        }
        // Decodes the JSON body, then applies the message's own rules (in its file).
        func decode<T: MessageBody>(_: T.Type) throws(ProtocolError) -> T {
            let body = try JSONPayload.decode(T.self, from: frame.payload, name: "\(type)")
            try body.check()
            return body
        }
        switch type {
        case .hello: self = .hello(try decode(Hello.self))
        case .welcome: self = .welcome(try decode(Welcome.self))
        case .statusRequest:
            _ = try JSONPayload.decode([String: String].self, from: frame.payload, name: "\(type)")
            self = .statusRequest
        case .watch:
            _ = try JSONPayload.decode([String: String].self, from: frame.payload, name: "\(type)")
            self = .watch
        case .thumbnailCancel:
            _ = try JSONPayload.decode([String: String].self, from: frame.payload, name: "\(type)")
            self = .thumbnailCancel
        case .thumbnailRequest: self = .thumbnailRequest(try decode(ThumbnailRequest.self))
        case .thumbnail: self = .thumbnail(try decode(ThumbnailPart.self))
        case .timeRequest: self = .timeRequest(try decode(TimeRequest.self))
        case .timeReply: self = .timeReply(try decode(TimeReply.self))
        case .status: self = .status(try decode(ReceiverStatus.self))
        case .error: self = .error(try decode(ErrorMessage.self))
        case .play: self = .play(try decode(PlayRequest.self))
        case .playAccepted: self = .playAccepted(try decode(PlayAccepted.self))
        // An event and a control are checked by their own decoders (PlaybackEvent+JSON.swift, PlaybackControl.swift).
        case .event: self = .event(try JSONPayload.decode(PlaybackEvent.self, from: frame.payload, name: "\(type)"))
        case .control:
            self = .control(try JSONPayload.decode(PlaybackControl.self, from: frame.payload, name: "\(type)"))
        case .mediaHello: self = .mediaHello(try decode(MediaHello.self))
        case .mediaRead:
            // The canonical binary form first (the hot path), JSON otherwise; the same rules for both.
            if let body = MediaRead.canonical(frame.payload) {
                try body.check()
                self = .mediaRead(body)
            } else {
                self = .mediaRead(try decode(MediaRead.self))
            }
        case .mediaData:
            guard frame.payload.count >= 8 else {
                throw ProtocolError(.malformedMessage, "mediaData is shorter than its 8-byte offset")
            }
            let offset = frame.payload.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            guard offset <= UInt64(Int64.max) else {
                throw ProtocolError(.malformedMessage, "mediaData offset out of range")
            }
            self = .mediaData(MediaData(offset: Int64(offset), bytes: Array(frame.payload.dropFirst(8))))
        case .pairingStart, .pairingChallenge, .pairingProof, .pairingConfirmation, .pairingFailure:
            preconditionFailure("decoded above")
        }
    }
}
