/// The sender's mouse pointer in a `mirror` session, sent beside the pictures as a unit of the `MirrorStream` whose
/// payload begins with `magic` (a picture's payload begins with an H.264 start code, so the two never mix up; a
/// receiver that does not know cursor units hands this one to its decoder, which skips it as damaged). The receiver
/// draws the pointer over the picture: it moves without a picture being encoded, and costs a few bytes a move.
///
/// Layout (big-endian): `magic` (4 bytes); the pointer's hot spot `x`, `y` (Int32 each) in the picture's pixels from
/// its top-left corner (outside the picture: the pointer is not over it, nothing is drawn); the shape's `width` and
/// `height` (UInt16 each, at most `maximumSide`; both 0: the shape is unchanged, the unit only moves it), its hot
/// spot `hotX`, `hotY` (UInt16 each, inside the shape) and `width`×`height` pixels of 4 bytes, R G B A with straight
/// (not premultiplied) alpha, row after row. Sent at most `maximumRate` times a second, only when the pointer moved
/// or changed shape. docs/protocol.md, "The mirror session".
public struct MirrorCursor: Sendable, Equatable {
    /// The first bytes of a cursor unit's payload.
    public static let magic: [UInt8] = Array("CUR1".utf8)
    /// The bytes before the pixels.
    public static let headerLength = 20
    /// The widest and tallest shape (a large pointer of a high-density display theme fits).
    public static let maximumSide = 256
    /// Cursor units a second at most.
    public static let maximumRate = 30

    /// The hot spot's place in the picture, in its pixels.
    public var x: Int32
    public var y: Int32
    /// The new shape; nil when the shape is the one sent last.
    public var shape: Shape?

    /// A pointer's picture.
    public struct Shape: Sendable, Equatable {
        /// Size in pixels, 1...`maximumSide` each.
        public var width: Int
        public var height: Int
        /// The pixel that points, inside the shape.
        public var hotX: Int
        public var hotY: Int
        /// `width`×`height` pixels, R G B A, straight alpha.
        public var pixels: [UInt8]

        /// A shape; nil when its size, hot spot or pixels are out of bounds.
        public init?(width: Int, height: Int, hotX: Int, hotY: Int, pixels: [UInt8]) {
            guard (1...MirrorCursor.maximumSide).contains(width), (1...MirrorCursor.maximumSide).contains(height),
                (0..<width).contains(hotX), (0..<height).contains(hotY), pixels.count == width * height * 4
            else { return nil }
            (self.width, self.height, self.hotX, self.hotY, self.pixels) = (width, height, hotX, hotY, pixels)
        }
    }

    /// A pointer at (`x`, `y`), with a new `shape` or the last one.
    public init(x: Int32, y: Int32, shape: Shape? = nil) {
        (self.x, self.y, self.shape) = (x, y, shape)
    }

    /// Whether a unit's payload is a cursor unit (else it is a picture).
    public static func isCursor(_ payload: [UInt8]) -> Bool {
        payload.count >= magic.count && payload[0..<magic.count].elementsEqual(magic)
    }

    /// The unit's payload.
    public var encoded: [UInt8] {
        var bytes = Self.magic
        bytes.reserveCapacity(Self.headerLength + (shape?.pixels.count ?? 0))
        withUnsafeBytes(of: x.bigEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: y.bigEndian) { bytes.append(contentsOf: $0) }
        for value in [shape?.width ?? 0, shape?.height ?? 0, shape?.hotX ?? 0, shape?.hotY ?? 0] {
            withUnsafeBytes(of: UInt16(value).bigEndian) { bytes.append(contentsOf: $0) }
        }
        bytes += shape?.pixels ?? []
        return bytes
    }

    /// The cursor in a unit's payload.
    /// - Throws: `MirrorStream.Malformed` when it is not a cursor unit, or its size, hot spot or length is wrong.
    public init(decoding payload: [UInt8]) throws(MirrorStream.Malformed) {
        guard Self.isCursor(payload), payload.count >= Self.headerLength else {
            throw MirrorStream.Malformed(description: "a cursor unit of \(payload.count) bytes")
        }
        func integer(_ at: Int, _ count: Int) -> Int {
            payload[at..<at + count].reduce(0) { $0 << 8 | Int($1) }
        }
        x = Int32(truncatingIfNeeded: integer(4, 4))
        y = Int32(truncatingIfNeeded: integer(8, 4))
        let (width, height, hotX, hotY) = (integer(12, 2), integer(14, 2), integer(16, 2), integer(18, 2))
        if width == 0 && height == 0 {
            guard payload.count == Self.headerLength, hotX == 0, hotY == 0 else {
                throw MirrorStream.Malformed(description: "a cursor move with a shape's bytes")
            }
            shape = nil
            return
        }
        guard payload.count == Self.headerLength + width * height * 4,
            let shape = Shape(
                width: width, height: height, hotX: hotX, hotY: hotY, pixels: Array(payload[Self.headerLength...]))
        else {
            throw MirrorStream.Malformed(
                description:
                    "a cursor shape of \(width)x\(height), hot spot (\(hotX), \(hotY)), in \(payload.count) bytes")
        }
        self.shape = shape
    }
}
