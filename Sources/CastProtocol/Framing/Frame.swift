/// One unit on the wire: a message type and its payload.
///
/// On the wire a frame is a 4-byte big-endian length `N` followed by `N` bytes: one byte of
/// message type and `N - 1` bytes of payload. See docs/protocol.md.
public struct Frame: Sendable, Equatable {
    /// The message type byte. Unknown values survive framing; the state machine rejects them.
    public var type: UInt8
    /// The payload bytes (UTF-8 JSON for every message defined so far).
    public var payload: [UInt8]

    /// Creates a frame.
    public init(type: UInt8, payload: [UInt8]) {
        self.type = type
        self.payload = payload
    }

    /// The size of the length prefix.
    public static let headerSize = 4

    /// The frame's wire bytes.
    public func encoded() -> [UInt8] {
        let length = UInt32(payload.count + 1)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.headerSize + Int(length))
        bytes.append(UInt8(truncatingIfNeeded: length >> 24))
        bytes.append(UInt8(truncatingIfNeeded: length >> 16))
        bytes.append(UInt8(truncatingIfNeeded: length >> 8))
        bytes.append(UInt8(truncatingIfNeeded: length))
        bytes.append(type)
        bytes.append(contentsOf: payload)
        return bytes
    }
}
