import CastProtocol

/// The body of `POST /play`: what to play and where to start.
///
/// Accepted forms (pyatv sends the first; older iOS the last):
/// - a binary property list (`bplist00`, `Content-Type: application/x-apple-binary-plist`),
/// - an XML property list,
/// - text parameters: `Content-Location: URL` and `Start-Position: F` lines (`text/parameters`).
///
/// The request must say it is one of them (``contentTypes``).
public struct AirPlayPlayRequest: Sendable, Equatable {
    /// Where playback starts.
    public enum Start: Sendable, Equatable {
        /// A fraction of the duration, 0...1 (`Start-Position`): applied once the duration is known.
        case fraction(Double)
        /// Seconds from the beginning (`Start-Position-Seconds`, sent by newer clients).
        case seconds(Double)
    }

    /// The http(s) URL to play (`Content-Location`), checked like a Cast `play.url`.
    public var url: String
    /// Where to start.
    public var start: Start
    /// The client's session id (`X-Apple-Session-ID`, from the body or the header), at most 128 bytes.
    public var sessionID: String?

    /// The longest session id kept.
    public static let maximumSessionIDLength = 128

    /// The `Content-Type`s a `/play` may have (parameters such as `; charset=utf-8` aside). One is required, and none
    /// is a type a web page may send across origins without asking first (CORS), which castd never grants: so a
    /// page cannot make a browser on the LAN start playback here.
    public static let contentTypes: Set<String> = [
        "application/x-apple-binary-plist", "text/x-apple-plist+xml", "application/xml", "text/xml", "text/parameters",
    ]

    /// A request for `url` from `start`.
    public init(url: String, start: Start = .fraction(0), sessionID: String? = nil) {
        self.url = url
        self.start = start
        self.sessionID = sessionID
    }

    /// Decodes a `/play` request's body, taking the session id from the header when the body has none.
    /// - Throws: 400 for a missing or unusable URL or position, 415 for a body that is not one of the forms or a
    ///   missing or other `Content-Type`.
    public init(_ request: HTTPRequest) throws(HTTPRequestError) {
        let type = request.header("Content-Type")?.prefix { $0 != ";" }.trimmingBlanks().lowercased()
        guard let type, Self.contentTypes.contains(type) else {
            throw HTTPRequestError(
                .unsupportedMediaType,
                "/play needs a Content-Type of application/x-apple-binary-plist, text/x-apple-plist+xml, "
                    + "application/xml, text/xml or text/parameters")
        }
        let body = request.body
        var fields: [String: Any] = [:]
        if PropertyList.isPropertyList(body) {
            guard let dictionary = PropertyList.dictionary(from: body) else {
                throw HTTPRequestError(.badRequest, "the /play body is not a property list dictionary")
            }
            fields = dictionary
        } else {
            guard let text = String(validating: body, as: UTF8.self) else {
                throw HTTPRequestError(.unsupportedMediaType, "the /play body is neither a property list nor text")
            }
            for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
                guard let colon = line.firstIndex(of: ":") else {
                    throw HTTPRequestError(
                        .unsupportedMediaType, "the /play body is neither a property list nor text parameters")
                }
                let key = line[..<colon].trimmingBlanks()
                if fields[key] == nil { fields[key] = line[line.index(after: colon)...].trimmingBlanks() }
            }
        }
        guard let url = fields["Content-Location"] as? String else {
            throw HTTPRequestError(.badRequest, "the /play body has no Content-Location")
        }
        if let problem = PlayRequest.problem(withURL: url) {
            throw HTTPRequestError(.badRequest, "Content-Location \(problem)")
        }
        self.url = url
        if let raw = fields["Start-Position-Seconds"] {
            guard let seconds = PropertyList.number(raw), seconds.isFinite, seconds >= 0, seconds <= 1e7 else {
                throw HTTPRequestError(.badRequest, "Start-Position-Seconds must be a number of seconds")
            }
            start = .seconds(seconds)
        } else if let raw = fields["Start-Position"] {
            guard let fraction = PropertyList.number(raw), fraction.isFinite, (0...1).contains(fraction) else {
                throw HTTPRequestError(.badRequest, "Start-Position must be a fraction from 0 to 1")
            }
            start = .fraction(fraction)
        } else {
            start = .fraction(0)
        }
        let id = (fields["X-Apple-Session-ID"] as? String) ?? request.header("X-Apple-Session-ID")
        if let id {
            guard id.utf8.count <= Self.maximumSessionIDLength, id.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw HTTPRequestError(.badRequest, "a bad X-Apple-Session-ID")
            }
        }
        sessionID = id
    }
}

extension Substring {
    /// The text without spaces and tabs at either end.
    fileprivate func trimmingBlanks() -> String {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return String(text)
    }
}
