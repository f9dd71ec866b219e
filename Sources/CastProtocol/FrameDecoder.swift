/// Cuts a byte stream into frames, refusing oversized and empty frames as soon as their
/// length prefix arrives, so a peer that announces 2 GiB costs us four bytes, not 2 GiB.
///
/// A value type with no I/O: feed it bytes, take frames out.
public struct FrameDecoder: Sendable {
    /// The largest frame body (type byte + payload) accepted.
    public let maximumFrameLength: Int
    private var buffer: [UInt8] = []
    private var readIndex = 0

    /// The limit for control connections: every control message is small.
    public static let defaultMaximumFrameLength = 64 * 1024

    /// Creates a decoder that accepts frame bodies up to `maximumFrameLength` bytes.
    public init(maximumFrameLength: Int = FrameDecoder.defaultMaximumFrameLength) {
        precondition(maximumFrameLength >= 1)
        self.maximumFrameLength = maximumFrameLength
    }

    /// Whether bytes of an incomplete frame are waiting: a peer that stops here is stalling mid-frame.
    public var hasPartialFrame: Bool { readIndex < buffer.count }

    /// Appends bytes received from the peer.
    public mutating func feed(_ bytes: some Collection<UInt8>) {
        if readIndex > 0 && readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame, nil when more bytes are needed.
    /// - Throws: `ProtocolError` when the length prefix is zero or above the limit; the stream is unusable after that.
    public mutating func nextFrame() throws(ProtocolError) -> Frame? {
        let available = buffer.count - readIndex
        guard available >= Frame.headerSize else { return nil }
        let length =
            Int(buffer[readIndex]) << 24 | Int(buffer[readIndex + 1]) << 16 | Int(buffer[readIndex + 2]) << 8
            | Int(buffer[readIndex + 3])
        guard length >= 1 else { throw ProtocolError(.emptyFrame, "frame length 0") }
        guard length <= maximumFrameLength else {
            throw ProtocolError(.frameTooLarge, "frame length \(length) exceeds the limit of \(maximumFrameLength)")
        }
        guard available >= Frame.headerSize + length else { return nil }
        let body = readIndex + Frame.headerSize
        let frame = Frame(type: buffer[body], payload: Array(buffer[(body + 1)..<(body + length)]))
        readIndex = body + length
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            readIndex = 0
        } else if readIndex > 64 * 1024 {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
        return frame
    }
}
