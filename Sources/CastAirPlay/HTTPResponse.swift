/// One HTTP/1.1 response as the AirPlay video server writes it: always with `Content-Length`, so a client on a
/// persistent connection knows where it ends.
public struct HTTPResponse: Sendable, Equatable {
    /// The status line's code and reason.
    public var status: HTTPStatus
    /// Header fields besides `Content-Length` and `Connection`, which ``encoded(closing:)`` writes itself.
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: [UInt8]

    /// A response of `status` with `headers` and `body`.
    public init(status: HTTPStatus, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A text/plain response (`text` and a final newline).
    public static func text(_ status: HTTPStatus, _ text: String) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: [("Content-Type", "text/parameters")], body: Array((text + "\n").utf8))
    }

    /// A binary property list response (`application/x-apple-binary-plist`, as an Apple TV answers).
    public static func plist(_ bytes: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: .ok, headers: [("Content-Type", "application/x-apple-binary-plist")], body: bytes)
    }

    /// The answer to `POST /reverse`: the connection is castd's to send `POST /event` requests on from now on.
    public static let reverse = HTTPResponse(
        status: .switchingProtocols, headers: [("Upgrade", "PTTH/1.0"), ("Connection", "Upgrade")])

    /// The answer to a request that was refused: its status and the reason as text.
    public static func refusal(_ error: HTTPRequestError) -> HTTPResponse {
        HTTPResponse(
            status: error.status, headers: [("Content-Type", "text/plain")], body: Array((error.message + "\n").utf8))
    }

    /// The bytes on the wire. `closing` adds `Connection: close` (the server closes after writing them).
    /// Header names and values must not hold CR or LF; the server's own values never do (checked here).
    public func encoded(closing: Bool = false) -> [UInt8] {
        var head = "HTTP/1.1 \(status.code) \(status.reason)\r\n"
        for (name, value) in headers {
            precondition(!(name + value).contains(where: { $0 == "\r" || $0 == "\n" }), "a header with a line break")
            head += "\(name): \(value)\r\n"
        }
        // A 1xx answer has no body and says no length (RFC 9110, 8.6).
        if status.code >= 200 { head += "Content-Length: \(body.count)\r\n" }
        if closing { head += "Connection: close\r\n" }
        head += "\r\n"
        return Array(head.utf8) + body
    }

    public static func == (lhs: HTTPResponse, rhs: HTTPResponse) -> Bool {
        lhs.status == rhs.status && lhs.body == rhs.body && lhs.headers.map(\.name) == rhs.headers.map(\.name)
            && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }
}
