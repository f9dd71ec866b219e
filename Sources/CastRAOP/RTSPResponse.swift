/// One RTSP response from a speaker, as `RTSPResponseParser` read it: every part checked and bounded.
public struct RTSPResponse: Sendable, Equatable {
    /// The status code (100...999).
    public var status: Int
    /// The reason phrase (`OK`, `Not Enough Bandwidth`, ...).
    public var reason: String
    /// Headers in the order received.
    public var headers: [(name: String, value: String)]
    /// The body (`Content-Length` bytes).
    public var body: [UInt8]

    /// Creates a response.
    public init(status: Int, reason: String, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
    }

    /// The value of the first header named `name` (case-insensitively).
    public func header(_ name: String) -> String? {
        let folded = name.lowercased()
        return headers.first { $0.name.lowercased() == folded }?.value
    }

    /// The `CSeq` header as a number, when present and numeric.
    public var cseq: Int? { header("CSeq").flatMap { Int($0) } }

    public static func == (a: RTSPResponse, b: RTSPResponse) -> Bool {
        a.status == b.status && a.reason == b.reason && a.body == b.body && a.headers.count == b.headers.count
            && zip(a.headers, b.headers).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}
