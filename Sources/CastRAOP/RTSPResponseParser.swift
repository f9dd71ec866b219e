/// Reads RTSP responses from a byte stream fed in pieces of any size. Bounded: a head (status line and headers)
/// above `maximumHeadBytes` or with more than `maximumHeaderCount` headers, or a body above `maximumBodyBytes`,
/// is an error as soon as it is seen, so a hostile speaker can make us neither buffer without end nor wait for
/// bytes it will never send beyond what the caller's read timeout allows.
///
/// Thread-safety: a value type; one reader owns it.
public struct RTSPResponseParser: Sendable {
    /// The longest head accepted, CRLFs included.
    public static let maximumHeadBytes = 8192
    /// The most header lines accepted.
    public static let maximumHeaderCount = 64
    /// The longest body accepted.
    public static let maximumBodyBytes = 65536

    private var buffer: [UInt8] = []
    /// The parsed head waiting for its body.
    private var pendingHead: (response: RTSPResponse, bodyLength: Int)?

    /// Creates an empty parser.
    public init() {}

    /// Bytes held that no response has used yet.
    public var bufferedByteCount: Int { buffer.count }

    /// Adds bytes read from the connection.
    public mutating func append<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        buffer.append(contentsOf: bytes)
    }

    /// The next complete response, nil when more bytes are needed.
    /// - Throws: `RAOPError` `.malformedResponse` or `.responseTooLarge`; the parser is then unusable.
    public mutating func nextResponse() throws(RAOPError) -> RTSPResponse? {
        if pendingHead == nil {
            guard let end = Self.endOfHead(in: buffer) else {
                if buffer.count > Self.maximumHeadBytes {
                    throw RAOPError(
                        .responseTooLarge, "the speaker sent an RTSP head above \(Self.maximumHeadBytes) bytes")
                }
                return nil
            }
            guard end.bodyStart <= Self.maximumHeadBytes else {
                throw RAOPError(.responseTooLarge, "the speaker sent an RTSP head above \(Self.maximumHeadBytes) bytes")
            }
            pendingHead = try Self.parseHead(buffer[..<end.headEnd])
            buffer.removeFirst(end.bodyStart)
        }
        guard let (head, length) = pendingHead, buffer.count >= length else { return nil }
        var response = head
        response.body = Array(buffer[..<length])
        buffer.removeFirst(length)
        pendingHead = nil
        return response
    }

    /// Where the head ends (before the blank line) and the body starts (after it).
    private static func endOfHead(in bytes: [UInt8]) -> (headEnd: Int, bodyStart: Int)? {
        let limit = min(bytes.count, maximumHeadBytes + 4)
        guard limit >= 4 else { return nil }
        for i in 0...(limit - 4)
        where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
            return (i, i + 4)
        }
        return nil
    }

    private static func parseHead(_ bytes: ArraySlice<UInt8>) throws(RAOPError) -> (RTSPResponse, Int) {
        // Only printable ASCII, tab and CRLF: anything else (NUL, bare CR, UTF-8) is not a head we accept.
        var lines: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let byte = bytes[i]
            if byte == 13 {
                guard i + 1 < bytes.endIndex, bytes[i + 1] == 10 else {
                    throw RAOPError(.malformedResponse, "a bare CR in the speaker's RTSP head")
                }
                lines.append(bytes[start..<i])
                i += 2
                start = i
                continue
            }
            guard byte == 9 || (byte >= 0x20 && byte < 0x7F) else {
                throw RAOPError(.malformedResponse, "a control or non-ASCII byte (\(byte)) in the speaker's RTSP head")
            }
            i += 1
        }
        lines.append(bytes[start..<bytes.endIndex])
        let statusLine = String(decoding: lines[0], as: UTF8.self)
        // RTSP/1.0 SP 3DIGIT [SP reason]
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0] == "RTSP/1.0", parts[1].count == 3, parts[1].allSatisfy(\.isASCIIDigit),
            let status = Int(parts[1]), status >= 100
        else {
            throw RAOPError(.malformedResponse, "not an RTSP/1.0 status line: \"\(statusLine.prefix(80))\"")
        }
        let reason = parts.count == 3 ? String(parts[2]) : ""
        guard lines.count - 1 <= maximumHeaderCount else {
            throw RAOPError(.responseTooLarge, "the speaker sent more than \(maximumHeaderCount) RTSP headers")
        }
        var headers: [(name: String, value: String)] = []
        var contentLength: Int?
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else {
                throw RAOPError(
                    .malformedResponse,
                    "an RTSP header line without a name: \"\(String(decoding: line.prefix(80), as: UTF8.self))\"")
            }
            let nameBytes = line[..<colon]
            guard nameBytes.allSatisfy(isTokenByte) else {
                throw RAOPError(.malformedResponse, "an RTSP header name with a space or separator")
            }
            let name = String(decoding: nameBytes, as: UTF8.self)
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingSpaces()
            if name.lowercased() == "content-length" {
                guard !value.isEmpty, value.count <= 9, value.allSatisfy(\.isASCIIDigit), let length = Int(value) else {
                    throw RAOPError(
                        .malformedResponse, "a Content-Length that is not a number: \"\(value.prefix(20))\"")
                }
                if let contentLength, contentLength != length {
                    throw RAOPError(.malformedResponse, "two different Content-Length headers")
                }
                guard length <= maximumBodyBytes else {
                    throw RAOPError(
                        .responseTooLarge, "the speaker announced a body of \(length) bytes (limit \(maximumBodyBytes))"
                    )
                }
                contentLength = length
            }
            headers.append((name, value))
        }
        return (RTSPResponse(status: status, reason: reason, headers: headers), contentLength ?? 0)
    }

    /// RFC 2616 token characters: visible ASCII except separators.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        guard byte > 0x20 && byte < 0x7F else { return false }
        return !"()<>@,;:\\\"/[]?={}".utf8.contains(byte)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    func trimmingSpaces() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " && $0 != "\t" }) else { return "" }
        let last = scalars.lastIndex(where: { $0 != " " && $0 != "\t" })!
        return String(scalars[first...last])
    }
}
