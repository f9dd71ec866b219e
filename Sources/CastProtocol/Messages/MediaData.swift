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
