/// One RTSP request to a speaker (RFC 2326 framing, as AirPlay 1 senders write it).
///
/// Header names and values are ours, never the speaker's: a CR or LF in one is a programming error.
public struct RTSPRequest: Sendable, Equatable {
    /// `ANNOUNCE`, `SETUP`, `RECORD`, `SET_PARAMETER`, `FLUSH`, `TEARDOWN`, `OPTIONS`.
    public var method: String
    /// The request URI: `rtsp://<our address>/<session id>` (or `*` for OPTIONS).
    public var uri: String
    /// Headers in the order written; `CSeq` and `Content-Length` are added by `encoded(cseq:)`.
    public var headers: [(name: String, value: String)]
    /// The body (SDP, `text/parameters`), possibly empty.
    public var body: [UInt8]

    /// Creates a request.
    public init(method: String, uri: String, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.method = method
        self.uri = uri
        self.headers = headers
        self.body = body
    }

    /// The value of the first header named `name` (case-insensitively).
    public func header(_ name: String) -> String? {
        let folded = name.lowercased()
        return headers.first { $0.name.lowercased() == folded }?.value
    }

    /// The bytes on the wire: request line, `CSeq`, the headers, `Content-Length` when there is a body, a blank
    /// line, the body.
    public func encoded(cseq: Int) -> [UInt8] {
        var text = "\(method) \(uri) RTSP/1.0\r\nCSeq: \(cseq)\r\n"
        for (name, value) in headers {
            precondition(
                !(name + value).contains(where: { $0 == "\r" || $0 == "\n" }), "RTSP header with a line break: \(name)")
            text += "\(name): \(value)\r\n"
        }
        if !body.isEmpty { text += "Content-Length: \(body.count)\r\n" }
        text += "\r\n"
        return Array(text.utf8) + body
    }

    public static func == (a: RTSPRequest, b: RTSPRequest) -> Bool {
        a.method == b.method && a.uri == b.uri && a.body == b.body && a.headers.count == b.headers.count
            && zip(a.headers, b.headers).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}
