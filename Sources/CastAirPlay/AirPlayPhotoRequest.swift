/// `PUT /photo`: a picture an AirPlay client (an iPhone's Photos app, as an Apple TV or Kodi serves it) shows, caches
/// or shows from its cache.
///
/// | headers | meaning |
/// |---|---|
/// | (no `X-Apple-AssetAction`) | show the body's picture now |
/// | `X-Apple-AssetAction: cacheOnly`, `X-Apple-AssetKey: K` | keep the body's picture under K, show nothing |
/// | `X-Apple-AssetAction: displayCached`, `X-Apple-AssetKey: K` | show the picture kept under K (no body needed) |
///
/// Every form needs `X-Apple-Session-ID`, as `/reverse` does. `X-Apple-Transition` (`Dissolve`, …) is accepted and
/// ignored: the picture replaces the one on screen at once. The body must be a JPEG or a PNG (its first bytes say
/// which); nothing else about it is checked here: it is decoded by the sandboxed decoder worker, like any media.
public struct AirPlayPhotoRequest: Sendable, Equatable {
    /// What the request asks for.
    public enum Action: Sendable, Equatable {
        /// Show `picture` now.
        case show(picture: [UInt8])
        /// Keep `picture` under `key` without showing it.
        case cache(key: String, picture: [UInt8])
        /// Show the picture kept under `key`.
        case showCached(key: String)
    }

    /// What to do.
    public var action: Action
    /// The client's `X-Apple-Session-ID`: the session the picture is shown in (and whose events its reverse
    /// connection hears).
    public var sessionID: String

    /// The largest picture accepted, in bytes (a larger `Content-Length` is answered 413 before the body is read:
    /// `HTTPRequestParser.Limits.photoBody`). An iPhone sends a JPEG of its screen's size, a few MB at most.
    public static let maximumSize = 16 << 20
    /// The longest `X-Apple-AssetKey` kept (an iPhone sends a UUID).
    public static let maximumKeyLength = 128

    /// A request to carry out `action` in session `sessionID`.
    public init(action: Action, sessionID: String) {
        self.action = action
        self.sessionID = sessionID
    }

    /// Decodes a `PUT /photo`.
    /// - Throws: 400 for a missing or bad session id, asset action or key, or an empty body where a picture is
    ///   needed; 413 for a body over ``maximumSize``; 415 for a body that is not a JPEG or a PNG.
    public init(_ request: HTTPRequest) throws(HTTPRequestError) {
        guard let id = request.header("X-Apple-Session-ID"), Self.isToken(id, maximumLength: 128) else {
            throw HTTPRequestError(.badRequest, "/photo needs an X-Apple-Session-ID")
        }
        sessionID = id
        let key = request.header("X-Apple-AssetKey")
        if let key, !Self.isToken(key, maximumLength: Self.maximumKeyLength) {
            throw HTTPRequestError(.badRequest, "a bad X-Apple-AssetKey")
        }
        switch request.header("X-Apple-AssetAction")?.lowercased() {
        case nil:
            action = .show(picture: try Self.picture(request.body))
        case "cacheonly":
            guard let key else { throw HTTPRequestError(.badRequest, "cacheOnly needs an X-Apple-AssetKey") }
            action = .cache(key: key, picture: try Self.picture(request.body))
        case "displaycached":
            guard let key else { throw HTTPRequestError(.badRequest, "displayCached needs an X-Apple-AssetKey") }
            action = .showCached(key: key)
        default:
            throw HTTPRequestError(.badRequest, "X-Apple-AssetAction must be cacheOnly or displayCached")
        }
    }

    /// `body`, checked to be a picture castd shows: not empty, not over ``maximumSize``, a JPEG or PNG by its first
    /// bytes.
    private static func picture(_ body: [UInt8]) throws(HTTPRequestError) -> [UInt8] {
        guard !body.isEmpty else { throw HTTPRequestError(.badRequest, "/photo needs the picture as its body") }
        guard body.count <= maximumSize else {
            throw HTTPRequestError(.contentTooLarge, "the picture is over \(maximumSize) bytes")
        }
        guard PictureFormat(of: body) != nil else {
            throw HTTPRequestError(.unsupportedMediaType, "the /photo body is not a JPEG or PNG picture")
        }
        return body
    }

    /// Printable ASCII without blanks, 1...`maximumLength` bytes.
    private static func isToken(_ text: String, maximumLength: Int) -> Bool {
        (1...maximumLength).contains(text.utf8.count) && text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }
}

/// The picture formats `/photo` takes, told by their first bytes.
public enum PictureFormat: String, Sendable, Equatable {
    /// JPEG/JFIF/Exif: `FF D8 FF`.
    case jpeg
    /// PNG: its eight-byte signature.
    case png

    /// The format of `bytes`, nil when they start as neither.
    public init?(of bytes: [UInt8]) {
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self = .png
        } else {
            return nil
        }
    }
}
