/// The bytes of a `mirror` session's media (`PlayRequest.mirror`): the sender's screen as H.264 access units, each
/// with the time it was captured. `cast-mirror` writes it, `cast` serves it over the media connection as a stream
/// (read in order, no size), and the receiver's `MirrorPlayer` reads it. docs/protocol.md, "The mirror session".
///
/// Layout: the 8-byte `magic`, then units, each a 12-byte header (the payload's length, UInt32 big-endian, 1...
/// `maximumUnitLength`; the capture time in microseconds of the sender's monotonic clock, UInt64 big-endian) and
/// the payload: one access unit in Annex B (start codes), parameter sets in line before the first picture.
public enum MirrorStream {
    /// The stream's first bytes: "CASTMIR" and the layout's version, 1.
    public static let magic: [UInt8] = Array("CASTMIR1".utf8)
    /// The header before each unit's payload.
    public static let unitHeaderLength = 12
    /// The longest access unit: an intra picture of a detailed 4K screen at a high bit rate is well below.
    public static let maximumUnitLength = 8 << 20

    /// One access unit as it travels.
    public struct Unit: Sendable, Equatable {
        /// The capture time, microseconds of the sender's monotonic clock.
        public var captured: UInt64
        /// The access unit (Annex B).
        public var payload: [UInt8]

        /// Creates a unit.
        public init(captured: UInt64, payload: [UInt8]) {
            self.captured = captured
            self.payload = payload
        }

        /// The header that goes before `payloadLength` bytes captured at `captured`.
        public static func header(payloadLength: Int, captured: UInt64) -> [UInt8] {
            precondition((1...maximumUnitLength).contains(payloadLength), "a unit holds 1...maximumUnitLength bytes")
            var bytes: [UInt8] = []
            bytes.reserveCapacity(unitHeaderLength)
            withUnsafeBytes(of: UInt32(payloadLength).bigEndian) { bytes.append(contentsOf: $0) }
            withUnsafeBytes(of: captured.bigEndian) { bytes.append(contentsOf: $0) }
            return bytes
        }

        /// The unit's bytes on the stream: header and payload.
        public var encoded: [UInt8] { Self.header(payloadLength: payload.count, captured: captured) + payload }
    }

    /// The stream's problems: not a mirror stream, or a unit of a length out of bounds.
    public struct Malformed: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong, for people.
        public let description: String
    }

    /// Cuts a stream that arrives in pieces of any size into units. Bounded: it holds at most one unit and one header.
    ///
    /// Thread-safety: a value; one reader owns it.
    public struct Reader: Sendable {
        private var buffer: [UInt8] = []
        private var start = 0
        private var sawMagic = false

        /// An empty reader, at the stream's start.
        public init() {}

        /// Takes `bytes` as the stream's next bytes.
        public mutating func append(_ bytes: UnsafeRawBufferPointer) {
            if start > 0 && start == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                start = 0
            }
            buffer.append(contentsOf: bytes)
        }

        /// The next complete unit, or nil until more bytes arrive.
        /// - Throws: `Malformed` when the stream does not begin with `magic` or a unit's length is out of bounds.
        public mutating func next() throws(Malformed) -> Unit? {
            if !sawMagic {
                guard buffer.count - start >= magic.count else {
                    if !buffer[start...].elementsEqual(magic.prefix(buffer.count - start)) {
                        throw Malformed(description: "the media is not a mirror stream")
                    }
                    return nil
                }
                guard buffer[start..<start + magic.count].elementsEqual(magic) else {
                    throw Malformed(description: "the media is not a mirror stream")
                }
                start += magic.count
                sawMagic = true
            }
            guard buffer.count - start >= unitHeaderLength else { return nil }
            var length = 0
            for byte in buffer[start..<start + 4] { length = length << 8 | Int(byte) }
            guard (1...maximumUnitLength).contains(length) else {
                throw Malformed(description: "a mirror unit of \(length) bytes (1...\(maximumUnitLength) allowed)")
            }
            guard buffer.count - start >= unitHeaderLength + length else { return nil }
            var captured: UInt64 = 0
            for byte in buffer[start + 4..<start + unitHeaderLength] { captured = captured << 8 | UInt64(byte) }
            let payload = Array(buffer[start + unitHeaderLength..<start + unitHeaderLength + length])
            start += unitHeaderLength + length
            if start > 1 << 20 {
                buffer.removeFirst(start)
                start = 0
            }
            return Unit(captured: captured, payload: payload)
        }
    }
}
