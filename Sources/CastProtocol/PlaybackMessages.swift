/// Sender → receiver: play this.
public struct PlayRequest: Codable, Sendable, Equatable {
    /// What the sender calls it (the file name), shown in status and logs.
    public var title: String
    /// Where the media comes from.
    public var media: MediaDescriptor
    /// Where to start, in seconds (MPMoviePlayerController.initialPlaybackTime); nil = the beginning.
    public var startTime: Double?

    /// Creates a request.
    public init(title: String, media: MediaDescriptor, startTime: Double? = nil) {
        self.title = title
        self.media = media
        self.startTime = startTime
    }
}

/// Media the sender serves over a media connection (the receiver pulls it by byte ranges).
public struct MediaDescriptor: Codable, Sendable, Equatable {
    /// Total size in bytes; nil for a stream of unknown length (standard input, a pipe).
    public var size: Int64?
    /// Whether the receiver may read at any offset; false for standard input and pipes (reads must be in order).
    public var seekable: Bool
    /// A file name with its extension, which helps FFmpeg probe.
    public var nameHint: String?

    /// Creates a descriptor.
    public init(size: Int64?, seekable: Bool, nameHint: String?) {
        self.size = size
        self.seekable = seekable
        self.nameHint = nameHint
    }
}

/// Receiver → sender: the play request is accepted; open a media connection that presents `session`.
public struct PlayAccepted: Codable, Sendable, Equatable {
    /// A random token that ties the media connection to this playback session.
    public var session: String

    /// Creates the reply.
    public init(session: String) { self.session = session }
}

/// Sender → receiver: a playback control.
public struct PlaybackControl: Codable, Sendable, Equatable {
    /// What to do.
    public enum Action: String, Codable, Sendable {
        /// Pause (MPMoviePlaybackState.paused).
        case pause
        /// Resume after a pause.
        case resume
        /// Stop; the session finishes with `userExited`.
        case stop
    }
    /// What to do.
    public var action: Action

    /// Creates a control.
    public init(_ action: Action) { self.action = action }
}

/// Sender → receiver, the first message on a media connection: which session it serves.
public struct MediaHello: Codable, Sendable, Equatable {
    /// The protocol version.
    public var version: Int
    /// The token from `PlayAccepted`.
    public var session: String

    /// Creates the hello.
    public init(version: Int = protocolVersion, session: String) {
        self.version = version
        self.session = session
    }
}

/// Receiver → sender on a media connection: send `length` bytes from `offset`.
public struct MediaRead: Codable, Sendable, Equatable {
    /// The byte offset.
    public var offset: Int64
    /// How many bytes, at most `MediaRead.maximumLength`.
    public var length: Int

    /// The largest read: bounds what one request can make either side buffer.
    public static let maximumLength = 1 << 20

    /// Creates a read.
    public init(offset: Int64, length: Int) {
        self.offset = offset
        self.length = length
    }
}

/// Sender → receiver on a media connection: bytes of the media. Binary on the wire (not JSON):
/// 8 bytes big-endian offset, then the bytes. No bytes means the end of the media at `offset`.
public struct MediaData: Sendable, Equatable {
    /// Where the bytes start.
    public var offset: Int64
    /// The bytes.
    public var bytes: [UInt8]

    /// Creates a data message.
    public init(offset: Int64, bytes: [UInt8]) {
        self.offset = offset
        self.bytes = bytes
    }

    /// The largest frame body on a media connection: a maximal read plus the type byte and the offset.
    public static let maximumFrameLength = MediaRead.maximumLength + 1 + 8
}
