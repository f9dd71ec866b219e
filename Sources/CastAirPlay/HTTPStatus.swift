/// An HTTP status code with its reason phrase.
public struct HTTPStatus: Sendable, Equatable, Hashable {
    /// The three-digit code.
    public let code: Int
    /// The reason phrase sent after it.
    public let reason: String

    /// A status of `code` with `reason`.
    public init(_ code: Int, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// 101: the connection turns around (`POST /reverse`: castd sends requests on it from now on).
    public static let switchingProtocols = HTTPStatus(101, "Switching Protocols")
    /// 200: done.
    public static let ok = HTTPStatus(200, "OK")
    /// 400: the request is malformed (syntax, a missing or bad parameter).
    public static let badRequest = HTTPStatus(400, "Bad Request")
    /// 404: no such route.
    public static let notFound = HTTPStatus(404, "Not Found")
    /// 405: a known route with another method.
    public static let methodNotAllowed = HTTPStatus(405, "Method Not Allowed")
    /// 408: the request did not arrive in time.
    public static let requestTimeout = HTTPStatus(408, "Request Timeout")
    /// 421: the request names a host that is not this server (`Host`: DNS rebinding).
    public static let misdirectedRequest = HTTPStatus(421, "Misdirected Request")
    /// 411: a body without `Content-Length`.
    public static let lengthRequired = HTTPStatus(411, "Length Required")
    /// 412: `displayCached` names a picture that is not cached (Kodi's answer; the client sends it again).
    public static let preconditionFailed = HTTPStatus(412, "Precondition Failed")
    /// 413: the body is over the limit.
    public static let contentTooLarge = HTTPStatus(413, "Content Too Large")
    /// 414: the request line is over the limit.
    public static let uriTooLong = HTTPStatus(414, "URI Too Long")
    /// 415: a `/play` body that is neither a property list nor text parameters; a `/photo` body that is not a picture.
    public static let unsupportedMediaType = HTTPStatus(415, "Unsupported Media Type")
    /// 431: too many header fields, or too long.
    public static let headerFieldsTooLarge = HTTPStatus(431, "Request Header Fields Too Large")
    /// 501: a transfer coding we do not implement (chunked).
    public static let notImplemented = HTTPStatus(501, "Not Implemented")
    /// 503: the receiver is busy with another sender (take-over policy `deny`), or full.
    public static let serviceUnavailable = HTTPStatus(503, "Service Unavailable")
    /// 505: not HTTP/1.0 or HTTP/1.1.
    public static let versionNotSupported = HTTPStatus(505, "HTTP Version Not Supported")
}
