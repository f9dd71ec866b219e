import FoundationEssentials

/// The version of Cast's programs and libraries (castd, cast, CastKit), shown in hellos, help and manual pages.
public let castVersion = "0.1.0"

/// The wire ids of message types. Ids are never reused: a retired message keeps its number.
public enum MessageType: UInt8, Sendable, CaseIterable {
    /// Sender → receiver, first message on every connection.
    case hello = 1
    /// Receiver → sender, the answer to an accepted hello.
    case welcome = 2
    /// Sender → receiver: what are you doing?
    case statusRequest = 3
    /// Receiver → sender: the answer to `statusRequest`.
    case status = 4
    /// Either way: something failed; after a protocol violation the sender of `error` closes.
    case error = 5
    /// Sender → receiver: play this (`PlayRequest`).
    case play = 6
    /// Receiver → sender: the play request is accepted (`PlayAccepted`).
    case playAccepted = 7
    /// Receiver → sender: a playback event (`PlaybackEvent`), pushed as it happens.
    case event = 8
    /// Sender → receiver: pause, resume, stop (`PlaybackControl`).
    case control = 9
    /// Sender → receiver, first on a media connection (`MediaHello`).
    case mediaHello = 10
    /// Receiver → sender on a media connection (`MediaRead`).
    case mediaRead = 11
    /// Sender → receiver on a media connection (`MediaData`, binary).
    case mediaData = 12
    /// Sender → receiver: push me the events of whatever plays, now and later (`{}`).
    case watch = 13
    /// Sender → receiver: images of the media that plays, at given times (`ThumbnailRequest`).
    case thumbnailRequest = 14
    /// Sender → receiver: cancel every thumbnail request not answered yet (`{}`).
    case thumbnailCancel = 15
    /// Receiver → sender: part of an image, or an error, for one time of a request (`ThumbnailPart`).
    case thumbnail = 16
    /// Sender → receiver: the receiver's clock, please (`TimeRequest`).
    case timeRequest = 17
    /// Receiver → sender: the answer to `timeRequest`, stamped when it arrived and when it left (`TimeReply`).
    case timeReply = 18
    /// Sender → receiver: start pairing (`PairingStart`).
    case pairingStart = 30
    /// Receiver → sender: salt and B (`PairingChallenge`).
    case pairingChallenge = 31
    /// Sender → receiver: A and M1 (`PairingProof`).
    case pairingProof = 32
    /// Receiver → sender: M2 and the receiver's key (`PairingConfirmation`).
    case pairingConfirmation = 33
    /// Receiver → sender: pairing did not happen (`PairingFailure`).
    case pairingFailure = 34
    // 35...39: reserved for pairing.
}

extension MessageType {
    /// The message type of a pairing message (the same id).
    init(pairing type: PairingMessageType) {
        guard let value = MessageType(rawValue: type.rawValue) else {
            preconditionFailure("pairing ids are message ids")
        }
        self = value
    }
}

/// The protocol version this build speaks. A peer with another major version is refused.
public let protocolVersion = 1

/// Sender → receiver: who I am and which version I speak.
public struct Hello: Codable, Sendable, Equatable {
    /// The protocol version of the sender.
    public var version: Int
    /// The sender's human-readable name (user@host), shown in receiver logs.
    public var name: String
    /// The sending software, e.g. "cast 0.1".
    public var software: String

    /// Creates a hello.
    public init(version: Int = protocolVersion, name: String, software: String) {
        self.version = version
        self.name = name
        self.software = software
    }
}

/// Receiver → sender: the connection is accepted.
public struct Welcome: Codable, Sendable, Equatable {
    /// The receiver's protocol version.
    public var version: Int
    /// The receiver's friendly name.
    public var name: String
    /// The receiver's id (fingerprint of its public key), as in the TXT record.
    public var id: String
    /// The receiver's authentication mode: `pin`, `password` or `none`.
    public var auth: String

    /// Creates a welcome.
    public init(version: Int = protocolVersion, name: String, id: String, auth: String) {
        self.version = version
        self.name = name
        self.id = id
        self.auth = auth
    }
}

/// Receiver → sender: what the receiver is doing now.
public struct ReceiverStatus: Codable, Sendable, Equatable {
    /// The receiver's friendly name.
    public var name: String
    /// The receiver's id.
    public var id: String
    /// The playback state; `stopped` when idle.
    public var state: PlaybackState
    /// What plays, when something does.
    public var title: String?
    /// The position in seconds, when something plays.
    public var position: Double?
    /// The duration in seconds, when known.
    public var duration: Double?
    /// The output volume, 0...1.
    public var volume: Double?
    /// Whether the output is muted.
    public var muted: Bool?
    /// The load state (`stalled` while the input cannot keep up), when something plays.
    public var loadState: LoadState?
    /// The media time up to which media is buffered (as the `buffered` event), when something plays.
    public var playableDuration: Double?
    /// The input's rate as the receiver measures it (bits/s: the link, for served media), when something plays and
    /// it is known. Absent from receivers that predate it.
    public var linkRate: Double?
    /// The media's audio and subtitle tracks (the last `tracks` event), when something plays.
    public var tracks: [MediaTrack]?
    /// How far from its group's timeline the receiver was, and its rate's trim (the last `sync` event), while it
    /// plays in a group.
    public var sync: Sync?
    /// The group it plays in (the play request's `group`: its members' names as the sender gave them).
    public var group: [String]?
    /// Where what plays is in its sender's queue (the play request's `queue`).
    public var queue: QueuePlace?

    /// A group member's step (the `sync` event's fields).
    public struct Sync: Codable, Sendable, Equatable {
        /// Seconds ahead of the group's timeline (negative: behind), before the latest correction.
        public var offset: Double
        /// The trim of its clock's rate, parts per million.
        public var trim: Double
        /// True when the correction it wanted was out of range and is held (at the limit, or the last good one);
        /// absent otherwise.
        public var limited: Bool?

        /// Creates one.
        public init(offset: Double, trim: Double, limited: Bool? = nil) {
            self.offset = offset
            self.trim = trim
            self.limited = limited
        }
    }

    /// Creates a status.
    public init(
        name: String, id: String, state: PlaybackState, title: String? = nil, position: Double? = nil,
        duration: Double? = nil
    ) {
        self.name = name
        self.id = id
        self.state = state
        self.title = title
        self.position = position
        self.duration = duration
    }
}

/// Either way: a failure, with a stable code and a message for people.
public struct ErrorMessage: Codable, Sendable, Equatable {
    /// A stable word (see `ErrorCode`).
    public var code: ErrorCode
    /// A human-readable explanation.
    public var message: String

    /// Creates an error message.
    public init(code: ErrorCode, message: String) {
        self.code = code
        self.message = message
    }

    /// The error message telling a peer about its protocol error.
    public init(_ error: ProtocolError) {
        self.init(code: error.code, message: error.message)
    }
}

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
