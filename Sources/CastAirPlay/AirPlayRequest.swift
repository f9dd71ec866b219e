/// What an HTTP request to the AirPlay video server asks for: the route rules, as a value in and a value out.
///
/// | route | meaning |
/// |---|---|
/// | `POST /play` | play a URL (``AirPlayPlayRequest``) |
/// | `GET /playback-info` | the playback state as a property list |
/// | `POST /rate?value=R` | 0 pauses, 1 resumes (0.5...2 plays at that rate) |
/// | `GET /scrub` | `duration: D` and `position: P` as text |
/// | `POST /scrub?position=S` | seek to S seconds |
/// | `POST /stop` | stop |
/// | `GET /server-info` | the device's description as a property list |
/// | `POST /reverse` | turn the connection around for events (`Upgrade: PTTH/1.0`; ``AirPlayEvent``) |
/// | `PUT /photo` | show or cache a picture (``AirPlayPhotoRequest``) |
///
/// Any other path is 404; a known path with another method is 405.
public enum AirPlayRequest: Sendable, Equatable {
    /// `POST /play`.
    case play(AirPlayPlayRequest)
    /// `GET /playback-info`.
    case playbackInfo
    /// `POST /rate?value=R`: 0 pauses; otherwise plays at R.
    case rate(Double)
    /// `GET /scrub`.
    case scrubInfo
    /// `POST /scrub?position=S`: seek to S seconds.
    case seek(Double)
    /// `POST /stop`.
    case stop
    /// `GET /server-info`.
    case serverInfo
    /// `POST /reverse` with `Upgrade: PTTH/1.0`: castd sends the events of the session `sessionID` on this connection
    /// from now on (`X-Apple-Purpose: event`; no other purpose is served).
    case reverse(sessionID: String)
    /// `PUT /photo`: show a picture, or keep one for later.
    case photo(AirPlayPhotoRequest)

    /// The methods each path answers to.
    public static let routes: [String: Set<String>] = [
        "/play": ["POST"], "/playback-info": ["GET"], "/rate": ["POST"], "/scrub": ["GET", "POST"],
        "/stop": ["POST"], "/server-info": ["GET"], "/reverse": ["POST"], "/photo": ["PUT"],
    ]

    /// The rates the engine plays at besides 0 (pause).
    public static let rates: ClosedRange<Double> = 0.5...2

    /// Decodes `request`.
    /// - Throws: 404 (unknown path), 405 (wrong method), 400 (a missing or bad parameter), what
    ///   ``AirPlayPlayRequest`` throws for `/play` and ``AirPlayPhotoRequest`` for `/photo`.
    public init(_ request: HTTPRequest) throws(HTTPRequestError) {
        guard let methods = Self.routes[request.path] else {
            throw HTTPRequestError(.notFound, "no route \(request.path.prefix(200))")
        }
        guard methods.contains(request.method) else {
            throw HTTPRequestError(
                .methodNotAllowed, "\(request.path) takes \(methods.sorted().joined(separator: " or "))")
        }
        switch (request.method, request.path) {
        case ("POST", "/play"):
            self = .play(try AirPlayPlayRequest(request))
        case ("GET", "/playback-info"):
            self = .playbackInfo
        case ("POST", "/rate"):
            guard let value = request.query["value"].flatMap(Double.init), value == 0 || Self.rates.contains(value)
            else {
                throw HTTPRequestError(.badRequest, "/rate needs value=0 (pause) or a rate from 0.5 to 2")
            }
            self = .rate(value)
        case ("GET", "/scrub"):
            self = .scrubInfo
        case ("POST", "/scrub"):
            guard let position = request.query["position"].flatMap(Double.init), position.isFinite, position >= 0,
                position <= 1e7
            else { throw HTTPRequestError(.badRequest, "/scrub needs position=SECONDS") }
            self = .seek(position)
        case ("POST", "/stop"):
            self = .stop
        case ("GET", "/server-info"):
            self = .serverInfo
        case ("POST", "/reverse"):
            guard request.header("Upgrade")?.lowercased() == "ptth/1.0" else {
                throw HTTPRequestError(.badRequest, "/reverse needs Upgrade: PTTH/1.0")
            }
            let purpose = request.header("X-Apple-Purpose") ?? "event"
            guard purpose.lowercased() == "event" else {
                throw HTTPRequestError(
                    .badRequest, "/reverse serves X-Apple-Purpose: event only (not photos or slideshows)")
            }
            guard let id = request.header("X-Apple-Session-ID"),
                (1...AirPlayPlayRequest.maximumSessionIDLength).contains(id.utf8.count),
                id.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
            else { throw HTTPRequestError(.badRequest, "/reverse needs an X-Apple-Session-ID") }
            self = .reverse(sessionID: id)
        case ("PUT", "/photo"):
            self = .photo(try AirPlayPhotoRequest(request))
        default:
            preconditionFailure("a route in the table without a case: \(request.method) \(request.path)")
        }
    }
}
