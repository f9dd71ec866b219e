import FoundationEssentials

/// Receiver → sender: one part of the answer to one time of a `ThumbnailRequest`. JSON:
/// `{"request":7,"index":0,"time":1.5,"actualTime":1.52,"width":640,"height":360,"part":0,"parts":3,"data":"iVBO…"}`,
/// or for a time that has no image `{"request":7,"index":0,"time":1.5,"part":0,"parts":1,"error":"cancelled"}`.
///
/// A PNG travels in `parts` messages (at most `maximumParts`), each carrying up to `maximumPartBytes` of it in base64,
/// so that every message stays far below the control connection's 64 KiB frame limit and events are never held up
/// behind an image for long; a whole image is at most `maximumImageBytes` (2 MiB). The sender joins parts 0..<parts of
/// the same (request, index) in order.
public struct ThumbnailPart: Codable, Sendable, Equatable {
    /// The request's number.
    public var request: UInt32
    /// Which time of the request this answers (its position in `times`, 0-based).
    public var index: Int
    /// The time asked for, in seconds.
    public var time: Double
    /// The media time of the frame in the image; nil with an error.
    public var actualTime: Double?
    /// The image's size in pixels; nil with an error.
    public var width: Int?
    public var height: Int?
    /// This part's number, 0..<parts.
    public var part: Int
    /// How many parts the image has (1 for an error).
    public var parts: Int
    /// This part of the PNG, as bytes (base64 on the wire); empty with an error.
    public var data: [UInt8]
    /// Why there is no image (`cancelled`, or the engine's message); nil for an image part.
    public var error: String?

    /// The most PNG bytes in one part.
    public static let maximumPartBytes = 32 * 1024
    /// The most parts of one image.
    public static let maximumParts = 64
    /// The largest PNG a receiver sends: `maximumParts` × `maximumPartBytes`.
    public static let maximumImageBytes = maximumParts * maximumPartBytes
    /// The error word for a time cancelled by `thumbnailCancel`.
    public static let cancelled = "cancelled"

    /// An image part.
    public init(
        request: UInt32, index: Int, time: Double, actualTime: Double, width: Int, height: Int, part: Int, parts: Int,
        data: [UInt8]
    ) {
        self.request = request
        self.index = index
        self.time = time
        self.actualTime = actualTime
        self.width = width
        self.height = height
        self.part = part
        self.parts = parts
        self.data = data
    }

    /// The answer for a time without an image.
    public init(request: UInt32, index: Int, time: Double, error: String) {
        self.request = request
        self.index = index
        self.time = time
        self.part = 0
        self.parts = 1
        self.data = []
        self.error = error
    }

    /// The messages that carry `png` (at most `maximumImageBytes`) as the answer to time `index` of `request`.
    public static func parts(
        of png: [UInt8], request: UInt32, index: Int, time: Double, actualTime: Double, width: Int, height: Int
    ) -> [ThumbnailPart] {
        precondition(!png.isEmpty && png.count <= maximumImageBytes, "a thumbnail of \(png.count) bytes")
        let count = (png.count + maximumPartBytes - 1) / maximumPartBytes
        return (0..<count).map { part in
            let slice = png[(part * maximumPartBytes)..<min(png.count, (part + 1) * maximumPartBytes)]
            return ThumbnailPart(
                request: request, index: index, time: time, actualTime: actualTime, width: width, height: height,
                part: part, parts: count, data: Array(slice))
        }
    }

    private enum Key: String, CodingKey {
        case request, index, time, actualTime, width, height, part, parts, data, error
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        request = try c.decode(UInt32.self, forKey: .request)
        index = try c.decode(Int.self, forKey: .index)
        time = try c.decode(Double.self, forKey: .time)
        actualTime = try c.decodeIfPresent(Double.self, forKey: .actualTime)
        width = try c.decodeIfPresent(Int.self, forKey: .width)
        height = try c.decodeIfPresent(Int.self, forKey: .height)
        part = try c.decode(Int.self, forKey: .part)
        parts = try c.decode(Int.self, forKey: .parts)
        error = try c.decodeIfPresent(String.self, forKey: .error)
        let text = try c.decodeIfPresent(String.self, forKey: .data) ?? ""
        // Checked before decoding, so a huge string costs no more than its own bytes.
        guard text.utf8.count <= (Self.maximumPartBytes + 2) / 3 * 4, let bytes = Data(base64Encoded: text) else {
            throw DecodingError.dataCorruptedError(
                forKey: .data, in: c, debugDescription: "not base64 of at most \(Self.maximumPartBytes) bytes")
        }
        data = Array(bytes)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(request, forKey: .request)
        try c.encode(index, forKey: .index)
        try c.encode(time, forKey: .time)
        try c.encodeIfPresent(actualTime, forKey: .actualTime)
        try c.encodeIfPresent(width, forKey: .width)
        try c.encodeIfPresent(height, forKey: .height)
        try c.encode(part, forKey: .part)
        try c.encode(parts, forKey: .parts)
        try c.encode(Data(data).base64EncodedString(), forKey: .data)
        try c.encodeIfPresent(error, forKey: .error)
    }

    /// Why the part is not acceptable (nil when it is).
    var problem: String? {
        guard index >= 0 && index < ThumbnailRequest.maximumTimes else { return "index out of range" }
        guard time.isFinite && time >= 0 && time <= 1e7 else { return "time out of range" }
        guard (1...Self.maximumParts).contains(parts), (0..<parts).contains(part) else {
            return "needs 0 ≤ part < parts ≤ \(Self.maximumParts)"
        }
        if let error {
            guard data.isEmpty, parts == 1, actualTime == nil, width == nil, height == nil else {
                return "an error part carries no image"
            }
            guard error.utf8.count <= maximumTextLength else {
                return "error is longer than \(maximumTextLength) bytes"
            }
            return nil
        }
        guard !data.isEmpty else { return "an image part needs data" }
        guard let actualTime, actualTime.isFinite, actualTime >= -1e7, actualTime <= 1e7 else {
            return "actualTime out of range"
        }
        guard let width, let height, (1...8192).contains(width), (1...8192).contains(height) else {
            return "width and height must be 1...8192"
        }
        return nil
    }
}

extension ThumbnailPart: MessageBody {
    func check() throws(ProtocolError) {
        try reportProblem(problem, in: "thumbnail")
    }
}
