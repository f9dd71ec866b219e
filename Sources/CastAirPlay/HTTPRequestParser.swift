import CastBase
import CastProtocol

/// Turns the bytes of one connection into HTTP/1.x requests, one at a time, within fixed bounds.
///
/// A value with no I/O: feed it what the socket gave, then take requests until it returns nil (more bytes
/// needed). Every request is bounded before it is buffered whole: the request line, the header block (its size
/// and its number of fields) and the body (`Content-Length` only; a chunked body is refused with 501). A
/// violation throws an ``HTTPRequestError`` carrying the status to answer with; the parser is then spent (the
/// start of the next request cannot be found), and the connection should be answered and closed.
///
/// Thread-safety: a value type; each connection owns its own.
public struct HTTPRequestParser: Sendable {
    /// The bounds on one request.
    public struct Limits: Sendable, Equatable {
        /// The longest request line (method, target, version), without its line ending.
        public var requestLine = 8 * 1024
        /// The longest head: the request line and all header lines with their line endings.
        public var head = 16 * 1024
        /// The most header fields.
        public var headerCount = 64
        /// The largest body. A `/play` property list is a few hundred bytes.
        public var body = 64 * 1024
        /// The largest body of a `PUT /photo`: the picture itself (``AirPlayPhotoRequest/maximumSize``).
        public var photoBody = AirPlayPhotoRequest.maximumSize
        /// The defaults above.
        public init() {}
    }

    /// The bounds this parser enforces.
    public let limits: Limits
    private var buffer: [UInt8] = []
    /// Where the unconsumed bytes start in `buffer` (consumed bytes are dropped in batches, not one by one).
    private var start = 0
    /// The next byte the search for the end of the head looks at, so each byte is scanned once.
    private var scanIndex = 0
    /// Where the head line being scanned starts.
    private var lineStart = 0
    /// Where the request line starts, once the empty lines before it are skipped; nil while they are. Those lines
    /// stay in the buffer (from `start`), so they count toward the head limit and make a partial request.
    private var requestLineStart: Int?
    /// Whether the one empty line that does not count (see `findHeadEnd`) was dropped since the last request.
    private var droppedEmptyLine = false
    /// A parsed head waiting for `bodyLength` body bytes.
    private var pending: (request: HTTPRequest, bodyLength: Int)?
    /// Set once a request was refused: later calls throw the same error.
    private var failure: HTTPRequestError?

    /// A parser enforcing `limits`.
    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// The `Content-Length` of the request whose head has arrived and whose body has not, all of it; nil otherwise. A
    /// server may refuse to wait for a large body (the parser would keep it all).
    public var awaitedBodyLength: Int? { pending?.bodyLength }

    /// The bytes of that body that have arrived; nil when no head awaits its body.
    public var receivedBodyLength: Int? { pending.map { min(buffer.count - start, $0.bodyLength) } }

    /// Whether part of a request has arrived but not all of it (a server times such a request out).
    public var hasPartialRequest: Bool { pending != nil || start < buffer.count }

    /// Appends bytes read from the connection.
    public mutating func feed<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        buffer.append(contentsOf: bytes)
    }

    /// The next complete request, nil when more bytes are needed.
    /// - Throws: ``HTTPRequestError`` when the bytes break HTTP/1.x or a bound; every later call throws it again.
    public mutating func nextRequest() throws(HTTPRequestError) -> HTTPRequest? {
        if let failure { throw failure }
        do {
            return try parseNext()
        } catch {
            failure = error
            throw error
        }
    }

    private mutating func parseNext() throws(HTTPRequestError) -> HTTPRequest? {
        if pending == nil {
            guard let headEnd = try findHeadEnd(), let requestLineStart else { return nil }
            let head = Array(buffer[requestLineStart..<headEnd])
            consume(upTo: headEnd)
            pending = try parseHead(head)
            droppedEmptyLine = false
        }
        guard let (request, length) = pending, buffer.count - start >= length else { return nil }
        var complete = request
        complete.body = Array(buffer[start..<(start + length)])
        consume(upTo: start + length)
        pending = nil
        return complete
    }

    /// The index just past the blank line that ends the head, nil when it has not arrived (within the bounds).
    private mutating func findHeadEnd() throws(HTTPRequestError) -> Int? {
        if requestLineStart == nil {
            // Empty lines before a request line are skipped (RFC 9112 §2.2). The first one is dropped (a client may
            // end a body with CR LF, then idle); the others are bytes of this request: a peer streaming CR LF runs
            // into the head limit and the request timeout like any other.
            if !droppedEmptyLine, scanIndex == start, let length = emptyLineLength(at: start) {
                droppedEmptyLine = true
                consume(upTo: start + length)
            }
            while scanIndex < buffer.count, buffer[scanIndex] == 0x0A || buffer[scanIndex] == 0x0D {
                if buffer[scanIndex] == 0x0D {
                    guard scanIndex + 1 < buffer.count else { break }
                    guard buffer[scanIndex + 1] == 0x0A else { throw HTTPRequestError(.badRequest, "a bare CR") }
                    scanIndex += 1
                }
                scanIndex += 1
            }
            if scanIndex - start > limits.head {
                throw HTTPRequestError(.headerFieldsTooLarge, "the request head is over \(limits.head) bytes")
            }
            guard scanIndex < buffer.count, buffer[scanIndex] != 0x0D else { return nil }
            requestLineStart = scanIndex
            lineStart = scanIndex
        }
        guard let requestLineStart else { preconditionFailure("the request line starts once blank lines are skipped") }
        while scanIndex < buffer.count {
            if buffer[scanIndex] == 0x0A {
                let length = scanIndex - lineStart
                if lineStart == requestLineStart, length > limits.requestLine + 1 {
                    throw HTTPRequestError(.uriTooLong, "the request line is over \(limits.requestLine) bytes")
                }
                if length == 0 || (length == 1 && buffer[lineStart] == 0x0D) { return scanIndex + 1 }
                lineStart = scanIndex + 1
            }
            scanIndex += 1
            if scanIndex - start > limits.head {
                if lineStart == requestLineStart {
                    throw HTTPRequestError(.uriTooLong, "the request line is over \(limits.requestLine) bytes")
                }
                throw HTTPRequestError(.headerFieldsTooLarge, "the request head is over \(limits.head) bytes")
            }
        }
        if lineStart == requestLineStart, scanIndex - requestLineStart > limits.requestLine + 1 {
            throw HTTPRequestError(.uriTooLong, "the request line is over \(limits.requestLine) bytes")
        }
        return nil
    }

    /// The length of the empty line (LF or CR LF) at `index`, nil when there is none (yet).
    private func emptyLineLength(at index: Int) -> Int? {
        guard index < buffer.count else { return nil }
        if buffer[index] == 0x0A { return 1 }
        guard buffer[index] == 0x0D, index + 1 < buffer.count, buffer[index + 1] == 0x0A else { return nil }
        return 2
    }

    private mutating func consume(upTo index: Int) {
        start = index
        // Drop consumed bytes once they dominate, so a long-lived connection's buffer stays small.
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 64 * 1024)
            start = 0
        } else if start > 32 * 1024 {
            buffer.removeFirst(start)
            start = 0
        }
        scanIndex = start
        lineStart = start
        requestLineStart = nil
    }

    /// Parses the head (request line and fields, with line endings, without the blank line).
    private func parseHead(_ head: [UInt8]) throws(HTTPRequestError) -> (request: HTTPRequest, bodyLength: Int) {
        var lines = head.split(separator: 0x0A, omittingEmptySubsequences: false).map { line -> ArraySlice<UInt8> in
            line.last == 0x0D ? line.dropLast() : line
        }
        // The head ends with its blank line (and the split leaves an empty piece after it).
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard let first = lines.first else { throw HTTPRequestError(.badRequest, "no request line") }
        if lines.contains(where: { $0.contains(0x0D) }) { throw HTTPRequestError(.badRequest, "a bare CR") }
        var request = try Self.parseRequestLine(first)
        let fields = lines.dropFirst()
        guard fields.count <= limits.headerCount else {
            throw HTTPRequestError(.headerFieldsTooLarge, "more than \(limits.headerCount) header fields")
        }
        for line in fields {
            request.headers.append(try Self.parseField(line))
        }
        if request.header("Transfer-Encoding") != nil {
            throw HTTPRequestError(.notImplemented, "Transfer-Encoding is not supported; send Content-Length")
        }
        let lengths = request.headers.filter { $0.name.lowercased() == "content-length" }.map(\.value)
        var bodyLength = 0
        // Only a picture may be large; the limit is known from the head, before a byte of the body is kept.
        let limit = request.method == "PUT" && request.path == "/photo" ? limits.photoBody : limits.body
        if let text = lengths.first {
            guard Set(lengths).count == 1, !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                throw HTTPRequestError(.badRequest, "a bad Content-Length")
            }
            guard text.utf8.count <= 9, let value = Int(text), value <= limit else {
                throw HTTPRequestError(.contentTooLarge, "the body is over \(limit) bytes")
            }
            bodyLength = value
        }
        return (request, bodyLength)
    }

    /// `METHOD SP origin-form SP HTTP/1.x`.
    static func parseRequestLine(_ line: ArraySlice<UInt8>) throws(HTTPRequestError) -> HTTPRequest {
        let parts = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw HTTPRequestError(.badRequest, "the request line is not METHOD TARGET VERSION")
        }
        let (method, target, version) = (parts[0], parts[1], parts[2])
        guard (1...16).contains(method.count),
            method.allSatisfy({ ($0 >= 0x41 && $0 <= 0x5A) || $0 == 0x5F || $0 == 0x2D })
        else { throw HTTPRequestError(.badRequest, "a bad method") }
        let versionText = String(decoding: version, as: UTF8.self)
        let minor: Int
        switch versionText {
        case "HTTP/1.1": minor = 1
        case "HTTP/1.0": minor = 0
        case let other where other.hasPrefix("HTTP/") && other.utf8.count <= 16:
            throw HTTPRequestError(.versionNotSupported, "only HTTP/1.0 and HTTP/1.1 are spoken")
        default: throw HTTPRequestError(.badRequest, "a bad HTTP version")
        }
        guard target.first == 0x2F, target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw HTTPRequestError(.badRequest, "the target must be a path (/...) of printable ASCII")
        }
        let targetText = String(decoding: target, as: UTF8.self)
        let path: Substring
        var query: [String: String] = [:]
        if let mark = targetText.firstIndex(of: "?") {
            path = targetText[..<mark]
            for pair in targetText[targetText.index(after: mark)...].split(separator: "&") {
                let name: Substring
                let value: Substring
                if let equals = pair.firstIndex(of: "=") {
                    name = pair[..<equals]
                    value = pair[pair.index(after: equals)...]
                } else {
                    (name, value) = (pair, "")
                }
                guard let decodedName = percentDecoded(name, plusIsSpace: true),
                    let decodedValue = percentDecoded(value, plusIsSpace: true)
                else {
                    throw HTTPRequestError(.badRequest, "bad percent-encoding in the query")
                }
                if query[decodedName] == nil { query[decodedName] = decodedValue }
            }
        } else {
            path = Substring(targetText)
        }
        let withoutFragment = path.prefix { $0 != "#" }
        return HTTPRequest(
            method: String(decoding: method, as: UTF8.self), path: String(withoutFragment), query: query,
            minorVersion: minor)
    }

    /// `name: value` with optional blanks around the value; the name is an RFC 9110 token.
    static func parseField(_ line: ArraySlice<UInt8>) throws(HTTPRequestError) -> (name: String, value: String) {
        guard let colon = line.firstIndex(of: 0x3A) else {
            throw HTTPRequestError(.badRequest, "a header line without ':'")
        }
        let name = line[line.startIndex..<colon]
        guard !name.isEmpty, name.allSatisfy(isTokenByte) else {
            throw HTTPRequestError(.badRequest, "a bad header field name")
        }
        var value = line[(colon + 1)...]
        while let first = value.first, first == 0x20 || first == 0x09 { value = value.dropFirst() }
        while let last = value.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
        guard value.allSatisfy({ $0 >= 0x20 && $0 != 0x7F || $0 == 0x09 }) else {
            throw HTTPRequestError(.badRequest, "a control character in a header field")
        }
        return (String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
    }

    /// RFC 9110 tchar.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }
}
