import Foundation

/// One HTTP/1.x request as the AirPlay video server receives it: parsed and bounded by ``HTTPRequestParser``.
public struct HTTPRequest: Sendable, Equatable {
    /// The method, e.g. `GET`, `POST` (upper-case letters only).
    public var method: String
    /// The path of the request target, percent-decoding not applied (`/play`).
    public var path: String
    /// The query parameters of the request target, percent-decoded; a repeated name keeps its first value.
    public var query: [String: String]
    /// The minor HTTP version: 0 for HTTP/1.0, 1 for HTTP/1.1.
    public var minorVersion: Int
    /// The header fields in the order received; names as sent.
    public var headers: [(name: String, value: String)]
    /// The body (`Content-Length` bytes; empty without one).
    public var body: [UInt8]

    /// Creates a request (tests build them directly; the server gets them from ``HTTPRequestParser``).
    public init(
        method: String, path: String, query: [String: String] = [:], minorVersion: Int = 1,
        headers: [(name: String, value: String)] = [], body: [UInt8] = []
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.minorVersion = minorVersion
        self.headers = headers
        self.body = body
    }

    /// The value of the first header field called `name` (compared without regard to case).
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// Whether the connection stays open after the response: HTTP/1.1 unless `Connection: close`, HTTP/1.0 only
    /// with `Connection: keep-alive` (RFC 9112 §9.3).
    public var keepsConnectionOpen: Bool {
        let tokens = (header("Connection") ?? "").lowercased().split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        if tokens.contains("close") { return false }
        return minorVersion >= 1 || tokens.contains("keep-alive")
    }

    public static func == (lhs: HTTPRequest, rhs: HTTPRequest) -> Bool {
        lhs.method == rhs.method && lhs.path == rhs.path && lhs.query == rhs.query
            && lhs.minorVersion == rhs.minorVersion && lhs.body == rhs.body
            && lhs.headers.map(\.name) == rhs.headers.map(\.name)
            && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }
}
