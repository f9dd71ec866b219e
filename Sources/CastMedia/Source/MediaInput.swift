/// What a `Player` plays: bytes a `MediaSource` gives (a file, a sender's media connection), or an http(s) URL
/// that FFmpeg opens itself.
public enum MediaInput: Sendable {
    /// Bytes read through a custom AVIOContext from `source`.
    case source(any MediaSource)
    /// An `http://` or `https://` URL (HLS playlists included), opened with FFmpeg's own protocols. HTTP basic (or
    /// digest) credentials go in the userinfo, percent-encoded: `http://user:pa%40ss@host/clip.mp4`.
    ///
    /// `proxy` (`http://127.0.0.1:PORT`): every connection FFmpeg makes for the URL (redirects, HLS playlists,
    /// segments and keys) goes through that http proxy, which decides where it may connect (castd's `CheckedProxy`
    /// for AirPlay clients' URLs); nil: FFmpeg connects directly. `formats`: the demuxers it may be read with.
    case url(String, proxy: String? = nil, formats: URLFormats = .any)
}

/// The demuxers an http(s) URL may be read with.
public enum URLFormats: String, Codable, Sendable, Equatable {
    /// Any FFmpeg has: a paired sender's URL (pairing is the trust decision).
    case any
    /// Only `URLInput.strangerFormatWhitelist`: a stranger's URL (an AirPlay client's).
    case strangers
}

/// How the engine opens URLs: which FFmpeg protocols it may use and how long it waits.
public enum URLInput {
    /// The only FFmpeg protocols a URL may reach, here and in everything it opens (HLS segments and keys,
    /// redirects): never `file`, `concat`, `subfile`, `data`, `pipe`, `udp`, ...
    public static let protocolWhitelist = "http,https,tcp,tls,crypto,hls,applehttp"

    /// The only demuxers a stranger's URL (an AirPlay client's) may be read with, nested inputs included (FFmpeg copies
    /// the list into an HLS variant's or segment's context): what AirPlay clients send (MP4/QuickTime and fragmented
    /// MP4, HLS with its MPEG-TS, ADTS AAC, AC-3, E-AC-3 and WebVTT segments, MP3), and Matroska/WebM, FLAC, Ogg and
    /// WAV files. Left out on purpose: demuxers that open inputs named in what they read by paths of their own rather
    /// than through `io_open` and the proxy (`concat`, `dash`, `image2`, `tee`-like ones), and the rest, which no
    /// AirPlay client needs. docs/security.md gives the reason for each.
    public static let strangerFormatWhitelist =
        "mov,mp4,m4a,hls,mpegts,aac,ac3,eac3,webvtt,mp3,matroska,webm,flac,ogg,wav"

    /// The only demuxers a still picture (`PlayerConfiguration.still`) may be read with: one JPEG or PNG, read from
    /// its source; no image sequence demuxer (`image2`), which opens files by name.
    public static let pictureFormatWhitelist = "jpeg_pipe,png_pipe"

    /// The whitelist of a URL fetched through a proxy: https reaches it over `httpproxy` (a CONNECT tunnel), which
    /// nothing may name itself (see `mayOpenThroughProxy`).
    static let proxiedProtocolWhitelist = protocolWhitelist + ",httpproxy"

    /// Whether a stream of a proxied URL may open `url`: http and https only (under `crypto` too, as HLS opens
    /// AES-128 segments), so that every connection is one the proxy makes.
    static func mayOpenThroughProxy(_ url: String) -> Bool {
        var rest = Substring(url)
        if rest.hasPrefix("crypto+") || rest.hasPrefix("crypto:") { rest = rest.dropFirst("crypto+".count) }
        return rest.hasPrefix("http://") || rest.hasPrefix("https://")
    }

    /// A connection or read that makes no progress for this long fails (FFmpeg's `rw_timeout`), in seconds.
    public static let timeout = 15.0

    /// The longest reconnect back-off before giving up (FFmpeg's `reconnect_delay_max`), in seconds.
    public static let reconnectDelayMax = 4

    /// The longest URL accepted.
    public static let maximumLength = 4096

    /// The schemes accepted.
    public static let schemes: Set<String> = ["http", "https"]

    /// `url` with its scheme in lower case (FFmpeg matches protocol names exactly), when it is an http(s) URL
    /// FFmpeg may open; throws a message saying why not otherwise.
    static func validated(_ url: String) throws -> String {
        guard url.utf8.count <= maximumLength else {
            throw MediaError.other("the URL is longer than \(maximumLength) bytes")
        }
        guard let colon = url.firstIndex(of: ":") else {
            throw MediaError.other("not a URL (no scheme): only http and https URLs are played")
        }
        let scheme = url[..<colon].lowercased()
        guard schemes.contains(scheme) else {
            throw MediaError.other("URL scheme '\(scheme)' is refused: only http and https URLs are played")
        }
        guard url[colon...].hasPrefix("://"), url.utf8.count > scheme.utf8.count + 3 else {
            throw MediaError.other("not an http(s) URL: it needs a host after \(scheme)://")
        }
        // Spaces and control characters would end up in the request line or a header.
        guard url.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw MediaError.other("the URL contains spaces, control or non-ASCII characters (percent-encode them)")
        }
        return scheme + url[colon...]
    }

    /// `url` without its userinfo (credentials), for logs and messages.
    public static func redacted(_ url: String) -> String {
        guard let start = url.range(of: "://") else { return url }
        let rest = url[start.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return url }
        return String(url[..<start.upperBound]) + String(rest[rest.index(after: at)...])
    }
}
