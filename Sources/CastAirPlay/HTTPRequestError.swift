/// Why bytes from an AirPlay client are not an acceptable HTTP request; carries the status it is answered with.
///
/// After such an error the connection cannot find the start of the next request: the server answers and closes.
public struct HTTPRequestError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The status of the answer (400, 404, 405, 413, 414, 431, 501, 505, ...).
    public let status: HTTPStatus
    /// What was wrong, for the log and the answer's body.
    public let message: String

    /// An error answered with `status`.
    public init(_ status: HTTPStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    public var description: String { "\(status.code) \(status.reason): \(message)" }
}
