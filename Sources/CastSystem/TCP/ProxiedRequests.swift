/// The client's side of a plain-http connection through ``CheckedProxy``, request by request. FFmpeg speaks to a
/// proxy in the absolute form (`GET http://host:port/clip.mp4 HTTP/1.1`); toward the origin server the proxy is the
/// client, and a client sends the origin form (`GET /clip.mp4 HTTP/1.1` with `Host:`, RFC 9112 §3.2.1), which every
/// server understands: Python's `http.server` and many phone-side servers answer 404 to the absolute form.
///
/// Each head is checked and rewritten: the target must name the origin the connection was made to (FFmpeg reuses
/// a proxy connection only for the same host; anything else would reach a server that was not checked), the method
/// is GET or HEAD and there is no body (reading media needs neither; a body's framing would have to be followed),
/// `Proxy-Connection` and `Proxy-Authorization` stay with the proxy, and a `Host` is added when missing. Bytes of a
/// head not yet complete are kept until it is.
struct ProxiedRequests {
    /// Where the connection goes: the host as the first request named it, and its port.
    let host: String
    let port: UInt16
    private var pending: [UInt8] = []

    /// Why a request cannot be passed on.
    struct Refusal: Error, Equatable {
        let reason: String
    }

    /// The longest head accepted.
    static let headLimit = CheckedProxy.headLimit

    init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// The bytes to send to the origin for `bytes` from the client: every head completed by them, rewritten.
    mutating func feed(_ bytes: some Collection<UInt8>) throws(Refusal) -> [UInt8] {
        let searchFrom = max(0, pending.count - 3)
        pending += bytes
        var out: [UInt8] = []
        var from = searchFrom
        while let end = CheckedProxy.endOfHead(pending, from: from) {
            out += try rewrite(pending[..<end])
            pending.removeFirst(end)
            from = 0
        }
        guard pending.count <= Self.headLimit else { throw Refusal(reason: "a request head longer than the limit") }
        return out
    }

    /// One head (ending in CR LF CR LF) in the origin form.
    func rewrite(_ head: ArraySlice<UInt8>) throws(Refusal) -> [UInt8] {
        let text = String(decoding: head, as: UTF8.self)
        // CR LF is one Character in Swift.
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        // The head ends with an empty line, which splitting leaves as two empty strings.
        while lines.last == "" { lines.removeLast() }
        guard let requestLine = lines.first else { throw Refusal(reason: "an empty request") }
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else { throw Refusal(reason: "not an HTTP/1 request") }
        let method = String(parts[0])
        guard method == "GET" || method == "HEAD" else { throw Refusal(reason: "method \(method) is not passed on") }
        guard let target = CheckedProxy.target(ofHead: ArraySlice(requestLine.utf8)), !target.tunnel,
            target.host.lowercased() == host.lowercased(), target.port == port
        else { throw Refusal(reason: "a request for another origin than the connection's") }
        var output = ["\(method) \(Self.originForm(of: String(parts[1]))) \(parts[2])"]
        var hasHost = false
        for line in lines.dropFirst() {
            let name = line.prefix { $0 != ":" }.lowercased()
            switch name {
            case "proxy-connection", "proxy-authorization": continue
            case "content-length":
                let value = line.drop { $0 != ":" }.dropFirst().filter { $0 != " " && $0 != "\t" }
                guard value == "0" else { throw Refusal(reason: "a request with a body") }
            case "transfer-encoding": throw Refusal(reason: "a request with a body")
            case "host": hasHost = true
            default: break
            }
            output.append(line)
        }
        if !hasHost {
            let name = host.contains(":") ? "[\(host)]" : host
            output.insert("Host: \(port == 80 ? name : "\(name):\(port)")", at: 1)
        }
        return Array((output.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    /// The path and query of an absolute `http://` URI (`/` when it has none), without its fragment.
    static func originForm(of absolute: String) -> String {
        let afterScheme = absolute.dropFirst("http://".count)
        let authorityEnd = afterScheme.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? afterScheme.endIndex
        var rest = afterScheme[authorityEnd...]
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        if rest.isEmpty { return "/" }
        return rest.hasPrefix("/") ? String(rest) : "/" + rest
    }
}
