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

    /// Appends bytes received from the peer, from memory the caller keeps.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        feed(UnsafeBufferPointer(start: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), count: bytes.count))
    }

    /// The next complete frame handed to `body` as its type and a view of its payload, without copying it (valid
    /// only inside `body`); nil when more bytes are needed. Checks and throws as `nextFrame()` does.
    public mutating func nextFrame<Result>(
        _ body: (_ type: UInt8, _ payload: UnsafeRawBufferPointer) throws -> Result
    ) throws -> Result? {
        guard let (start, length) = try nextFrameBounds() else { return nil }
        defer { consume(through: start + length) }
        return try buffer.withUnsafeBytes { bytes in
            try body(bytes[start], UnsafeRawBufferPointer(rebasing: bytes[(start + 1)..<(start + length)]))
        }
    }

    /// The next frame's type and body length (type byte + payload) once its header and `prefix` bytes of its payload
    /// are buffered (fewer when the body is shorter), the frame itself not taken; nil before. Checks the length as
    /// `nextFrame()` does. With `prefix` (a view valid only inside `body`), a caller that moves a large payload
    /// straight into its own memory (`take(_:into:)`, then its own reads of the rest) learns where it goes before a
    /// byte of it is copied here.
    public func peekFrameStart<Result>(
        prefix: Int, _ body: (_ type: UInt8, _ length: Int, _ prefix: UnsafeRawBufferPointer) throws -> Result
    ) throws -> Result? {
        let available = buffer.count - readIndex
        guard available >= Frame.headerSize + 1, let length = try nextLength() else { return nil }
        let wanted = min(prefix, length - 1)
        guard available >= Frame.headerSize + 1 + wanted else { return nil }
        let start = readIndex + Frame.headerSize + 1
        return try buffer.withUnsafeBytes { bytes in
            let prefix = UnsafeRawBufferPointer(rebasing: bytes[start..<(start + wanted)])
            return try body(bytes[readIndex + Frame.headerSize], length, prefix)
        }
    }

    /// How many bytes are buffered and not taken.
    public var bufferedCount: Int { buffer.count - readIndex }

    /// Takes up to `count` buffered bytes (all of them when fewer are buffered), copying them to `target` when it is
    /// given (it must hold them); returns how many. For a caller that reads a frame's body itself: the header and
    /// the prefix that `peekFrameStart` showed, then the part of the payload already buffered.
    public mutating func take(_ count: Int, into target: UnsafeMutableRawBufferPointer?) -> Int {
        let taken = min(count, buffer.count - readIndex)
        if let target {
            precondition(target.count >= taken, "the target cannot hold the bytes taken")
            buffer.withUnsafeBytes { bytes in
                target.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[readIndex..<(readIndex + taken)]))
            }
        }
        consume(through: readIndex + taken)
        return taken
    }

    /// Where the next complete frame's body lies in `buffer` (its type byte, then its payload); nil when incomplete.
    private func nextFrameBounds() throws(ProtocolError) -> (start: Int, length: Int)? {
        guard let length = try nextLength(), buffer.count - readIndex >= Frame.headerSize + length else { return nil }
        return (readIndex + Frame.headerSize, length)
    }

    /// The next frame's length prefix, checked (1 to the limit); nil while its 4 bytes are not all buffered.
    private func nextLength() throws(ProtocolError) -> Int? {
        guard buffer.count - readIndex >= Frame.headerSize else { return nil }
        let length =
            Int(buffer[readIndex]) << 24 | Int(buffer[readIndex + 1]) << 16 | Int(buffer[readIndex + 2]) << 8
            | Int(buffer[readIndex + 3])
        guard length >= 1 else { throw ProtocolError(.emptyFrame, "frame length 0") }
        guard length <= maximumFrameLength else {
            throw ProtocolError(.frameTooLarge, "frame length \(length) exceeds the limit of \(maximumFrameLength)")
        }
        return length
    }

    /// Drops the bytes of frames already taken, up to `end`.
    private mutating func consume(through end: Int) {
        readIndex = end
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            readIndex = 0
        } else if readIndex > 64 * 1024 {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
    }

    /// The next complete frame, nil when more bytes are needed.
    /// - Throws: `ProtocolError` when the length prefix is zero or above the limit; the stream is unusable after that.
    public mutating func nextFrame() throws(ProtocolError) -> Frame? {
        guard let (start, length) = try nextFrameBounds() else { return nil }
        let frame = Frame(type: buffer[start], payload: Array(buffer[(start + 1)..<(start + length)]))
        consume(through: start + length)
        return frame
    }
}
