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
        func decode<T: Decodable>(_: T.Type) throws(ProtocolError) -> T {
            try JSONPayload.decode(T.self, from: frame.payload, name: "\(type)")
        }
        switch type {
        case .hello:
            let body = try decode(Hello.self)
            try Self.check(text: body.name, field: "hello.name")
            try Self.check(text: body.software, field: "hello.software")
            self = .hello(body)
        case .welcome:
            let body = try decode(Welcome.self)
            try Self.check(text: body.name, field: "welcome.name")
            try Self.check(text: body.id, field: "welcome.id")
            self = .welcome(body)
        case .statusRequest:
            _ = try decode([String: String].self)
            self = .statusRequest
        case .watch:
            _ = try decode([String: String].self)
            self = .watch
        case .thumbnailCancel:
            _ = try decode([String: String].self)
            self = .thumbnailCancel
        case .thumbnailRequest:
            let body = try decode(ThumbnailRequest.self)
            if let problem = body.problem { throw ProtocolError(.malformedMessage, "thumbnailRequest \(problem)") }
            self = .thumbnailRequest(body)
        case .thumbnail:
            let body = try decode(ThumbnailPart.self)
            if let problem = body.problem { throw ProtocolError(.malformedMessage, "thumbnail \(problem)") }
            self = .thumbnail(body)
        case .timeRequest:
            let body = try decode(TimeRequest.self)
            if let problem = body.problem { throw ProtocolError(.malformedMessage, "timeRequest \(problem)") }
            self = .timeRequest(body)
        case .timeReply:
            let body = try decode(TimeReply.self)
            if let problem = body.problem { throw ProtocolError(.malformedMessage, "timeReply \(problem)") }
            self = .timeReply(body)
        case .status:
            let body = try decode(ReceiverStatus.self)
            try Self.check(text: body.name, field: "status.name")
            try Self.check(text: body.title ?? "", field: "status.title")
            if let group = body.group {
                guard group.count <= PlayRequest.maximumGroupSize else {
                    throw ProtocolError(.malformedMessage, "status.group names too many receivers")
                }
                for name in group { try Self.check(text: name, field: "status.group") }
            }
            if let rate = body.linkRate, !(rate.isFinite && rate >= 0) {
                throw ProtocolError(.malformedMessage, "status.linkRate must be a rate (bits/s)")
            }
            if let queue = body.queue, !queue.isValid {
                throw ProtocolError(
                    .malformedMessage, "status.queue must be 1 ≤ number ≤ count ≤ \(QueuePlace.maximumCount)")
            }
            self = .status(body)
        case .error:
            let body = try decode(ErrorMessage.self)
            try Self.check(text: body.message, field: "error.message")
            self = .error(body)
        case .play:
            let body = try decode(PlayRequest.self)
            try Self.check(text: body.title, field: "play.title")
            switch (body.media, body.url) {
            case (let media?, nil):
                try Self.check(text: media.nameHint ?? "", field: "play.media.nameHint")
                if let size = media.size, size < 0 {
                    throw ProtocolError(.malformedMessage, "play.media.size is negative")
                }
                if body.username != nil || body.password != nil {
                    throw ProtocolError(.malformedMessage, "play.username and play.password go only with play.url")
                }
                if let subtitles = body.subtitles {
                    try Self.check(text: subtitles.nameHint ?? "", field: "play.subtitles.nameHint")
                    guard (1...SubtitleFile.maximumSize).contains(subtitles.size) else {
                        throw ProtocolError(
                            .malformedMessage, "play.subtitles.size must be 1...\(SubtitleFile.maximumSize) bytes")
                    }
                }
            case (nil, let url?):
                if let problem = PlayRequest.problem(withURL: url) {
                    throw ProtocolError(.malformedMessage, "play.url \(problem)")
                }
                try Self.check(text: body.username ?? "", field: "play.username")
                try Self.check(text: body.password ?? "", field: "play.password")
                if body.username?.contains(":") == true {
                    throw ProtocolError(.malformedMessage, "play.username must not contain ':'")
                }
                if body.password != nil && body.username == nil {
                    throw ProtocolError(.malformedMessage, "play.password needs play.username")
                }
                if body.subtitles != nil {
                    throw ProtocolError(.malformedMessage, "play.subtitles goes only with play.media")
                }
            default:
                throw ProtocolError(.malformedMessage, "play needs exactly one of media and url")
            }
            if body.mirror == true {
                guard let media = body.media, !media.seekable, media.size == nil, body.subtitles == nil else {
                    throw ProtocolError(
                        .malformedMessage, "play.mirror goes only with a media stream (no size, not seekable)")
                }
            }
            if let start = body.startTime, !PlayRequest.startTimes.contains(start) {
                let most = Int(PlayRequest.startTimes.upperBound)
                throw ProtocolError(.malformedMessage, "play.startTime must be a number of seconds from 0 to \(most)")
            }
            if let language = body.audioLanguage, !PlayRequest.isLanguageCode(language) {
                throw ProtocolError(.malformedMessage, "play.audioLanguage must be 2 or 3 ASCII letters (ISO 639)")
            }
            if let group = body.group {
                guard (1...PlayRequest.maximumGroupSize).contains(group.count) else {
                    throw ProtocolError(
                        .malformedMessage, "play.group must name 1...\(PlayRequest.maximumGroupSize) receivers")
                }
                for name in group { try Self.check(text: name, field: "play.group") }
            }
            if let queue = body.queue, !queue.isValid {
                throw ProtocolError(
                    .malformedMessage, "play.queue must be 1 ≤ number ≤ count ≤ \(QueuePlace.maximumCount)")
            }
            if let language = body.subtitleLanguage, language != "off", !PlayRequest.isLanguageCode(language) {
                throw ProtocolError(
                    .malformedMessage, "play.subtitleLanguage must be 2 or 3 ASCII letters (ISO 639) or \"off\"")
            }
            self = .play(body)
        case .playAccepted:
            let body = try decode(PlayAccepted.self)
            try Self.check(text: body.session, field: "playAccepted.session")
            self = .playAccepted(body)
        case .event:
            self = .event(try decode(PlaybackEvent.self))
        case .control:
            self = .control(try decode(PlaybackControl.self))
        case .mediaHello:
            let body = try decode(MediaHello.self)
            try Self.check(text: body.session, field: "mediaHello.session")
            self = .mediaHello(body)
        case .mediaRead:
            let body: MediaRead
            if let canonical = MediaRead.canonical(frame.payload) {
                body = canonical
            } else {
                body = try decode(MediaRead.self)
            }
            guard body.offset >= 0, body.length > 0, body.length <= MediaRead.maximumLength else {
                throw ProtocolError(
                    .malformedMessage, "mediaRead needs offset ≥ 0 and length 1...\(MediaRead.maximumLength)")
            }
            guard body.resource == nil || body.resource == MediaRead.media || body.resource == MediaRead.subtitles
            else { throw ProtocolError(.malformedMessage, "mediaRead.resource must be 0 (the media) or 1 (subtitles)") }
            self = .mediaRead(body)
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

    private static func check(text: String, field: String) throws(ProtocolError) {
        guard text.utf8.count <= maximumTextLength else {
            throw ProtocolError(.malformedMessage, "\(field) is longer than \(maximumTextLength) bytes")
        }
    }

}
