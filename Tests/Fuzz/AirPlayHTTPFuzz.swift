// The AirPlay video server's input side: HTTPRequestParser on a byte stream fed in pieces, then the route rules
// (AirPlayRequest, with the /play body's binary/XML property list or text parameters) on each request.
//
// Input: byte 0 = control (bit 0: small limits, so every bound is reached; bit 1: the rest is a /play body
// rather than a stream; bit 2: the rest is a PUT /photo's asset action, key and body); bytes 1... = the stream or the
// body. Piece sizes (0 to 2 KiB, mostly small) come from
// a generator seeded with the input.
//
// Invariants: no trap; feeding in pieces gives exactly the requests (and the error) of feeding the whole stream
// at once; an error is a 4xx/5xx and the parser stays failed; a request has an upper-case method of 1...16,
// a path starting with "/" of printable ASCII, at most the header count, a body within the limit that matches
// its Content-Length (a PUT /photo's within the picture limit); a decoded route is one the table holds for that method, a /play URL passes the same check
// as a Cast play.url and its start is in range, a /photo has a session ID and a key of printable ASCII within their
// bounds and a picture (shown or cached) that starts as a JPEG or PNG and is within its bound, a rate is 0 or 0.5...2, a seek finite and >= 0; every answer
// (refusal or playback-info) encodes with a Content-Length equal to its body.

private let small: HTTPRequestParser.Limits = {
    var limits = HTTPRequestParser.Limits()
    limits.requestLine = 64
    limits.head = 256
    limits.headerCount = 4
    limits.body = 128
    limits.photoBody = 256
    return limits
}()

/// Every request, then the error (if any), feeding `pieces` one after another.
private func run(_ pieces: [[UInt8]], limits: HTTPRequestParser.Limits) -> (
    requests: [HTTPRequest], error: HTTPRequestError?, parser: HTTPRequestParser
) {
    var parser = HTTPRequestParser(limits: limits)
    var requests: [HTTPRequest] = []
    for piece in pieces {
        parser.feed(piece)
        do {
            while let request = try parser.nextRequest() { requests.append(request) }
            // What the request timeout counts: never more of a body than it awaits, and only while it awaits one.
            let received = parser.receivedBodyLength
            invariant((received == nil) == (parser.awaitedBodyLength == nil), "a body counted without its head")
            invariant(received.map { $0 >= 0 && $0 < parser.awaitedBodyLength! } ?? true, "a body counted past its end")
        } catch {
            return (requests, error, parser)
        }
    }
    return (requests, nil, parser)
}

private func checkAnswer(_ response: HTTPResponse) {
    let bytes = response.encoded(closing: true)
    let text = String(decoding: bytes, as: UTF8.self)
    invariant(text.hasPrefix("HTTP/1.1 \(response.status.code) "), "bad status line")
    invariant(text.contains("Content-Length: \(response.body.count)\r\n"), "no Content-Length")
    invariant(Array(bytes.suffix(response.body.count)) == response.body, "body not at the end")
}

private func checkRoute(_ request: HTTPRequest) {
    let decoded: AirPlayRequest
    do {
        decoded = try AirPlayRequest(request)
    } catch {
        invariant((400..<600).contains(error.status.code), "route error \(error.status.code)")
        checkAnswer(.refusal(error))
        return
    }
    invariant(AirPlayRequest.routes[request.path]?.contains(request.method) == true, "a route off the table")
    switch decoded {
    case .play(let play):
        invariant(request.path == "/play", "play from \(request.path)")
        invariant(PlayRequest.problem(withURL: play.url) == nil, "an unplayable URL accepted: \(play.url)")
        switch play.start {
        case .fraction(let f): invariant(f.isFinite && (0...1).contains(f), "fraction \(f)")
        case .seconds(let s): invariant(s.isFinite && s >= 0, "seconds \(s)")
        }
        if let id = play.sessionID {
            invariant(id.utf8.count <= AirPlayPlayRequest.maximumSessionIDLength, "long session id")
        }
    case .rate(let r): invariant(r == 0 || AirPlayRequest.rates.contains(r), "rate \(r)")
    case .seek(let s): invariant(s.isFinite && s >= 0, "seek \(s)")
    case .playbackInfo, .scrubInfo, .stop, .serverInfo: break
    case .reverse(let id):
        invariant(request.path == "/reverse", "reverse from \(request.path)")
        invariant(request.header("Upgrade")?.lowercased() == "ptth/1.0", "reverse without PTTH")
        invariant(
            (1...AirPlayPlayRequest.maximumSessionIDLength).contains(id.utf8.count)
                && id.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "reverse for session \(id.debugDescription)")
        // castd's events for it are requests our own parser reads back whole.
        var parser = HTTPRequestParser()
        parser.feed(AirPlayEvent(state: .playing).request(sessionID: id))
        let event = try? parser.nextRequest()
        invariant(
            event?.path == "/event" && event?.header("X-Apple-Session-ID") == id, "an event that does not parse")
    case .photo(let photo):
        invariant(request.method == "PUT" && request.path == "/photo", "photo from \(request.method) \(request.path)")
        invariant(isToken(photo.sessionID, 128), "photo in session \(photo.sessionID.debugDescription)")
        switch photo.action {
        case .show(let picture):
            checkPicture(picture)
        case .cache(let key, let picture):
            invariant(isToken(key, AirPlayPhotoRequest.maximumKeyLength), "key \(key.debugDescription)")
            checkPicture(picture)
        case .showCached(let key):
            invariant(isToken(key, AirPlayPhotoRequest.maximumKeyLength), "key \(key.debugDescription)")
        }
        // Its session's events (category photo) are requests our own parser reads back whole.
        var parser = HTTPRequestParser()
        parser.feed(AirPlayEvent(state: .playing, category: .photo).request(sessionID: photo.sessionID))
        invariant((try? parser.nextRequest())?.path == "/event", "a photo event that does not parse")
    }
}

/// Printable ASCII without blanks, 1...`length` bytes.
private func isToken(_ text: String, _ length: Int) -> Bool {
    (1...length).contains(text.utf8.count) && text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
}

private func checkPicture(_ picture: [UInt8]) {
    invariant(!picture.isEmpty && picture.count <= AirPlayPhotoRequest.maximumSize, "a picture of \(picture.count)")
    invariant(PictureFormat(of: picture) != nil, "a picture that is not a JPEG or PNG")
}

/// A `PUT /photo` from `bytes`: the first says which asset action (none, cacheOnly, displayCached, or the next
/// bytes up to a NUL as text), the next up to a NUL the key (none when empty), then the session ID up to a NUL, and the
/// rest is the body.
private func photoRequest(_ bytes: [UInt8]) -> HTTPRequest {
    var rest = bytes[...]
    func field() -> String {
        let text = rest.prefix { $0 != 0 }
        rest = rest.dropFirst(text.count + 1)
        return String(decoding: text, as: UTF8.self)
    }
    var headers: [(name: String, value: String)] = []
    let action = rest.popFirst() ?? 0
    switch action % 4 {
    case 1: headers.append(("X-Apple-AssetAction", "cacheOnly"))
    case 2: headers.append(("X-Apple-AssetAction", "displayCached"))
    case 3: headers.append(("X-Apple-AssetAction", field()))
    default: break
    }
    let key = field()
    if !key.isEmpty { headers.append(("X-Apple-AssetKey", key)) }
    let session = field()
    if !session.isEmpty { headers.append(("X-Apple-Session-ID", session)) }
    if action & 0x80 != 0 { headers.append(("X-Apple-Transition", "Dissolve")) }
    return HTTPRequest(method: "PUT", path: "/photo", headers: headers, body: Array(rest))
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = fuzzInput(data, size)
    guard let control = input.first else { return 0 }
    let rest = Array(input.dropFirst())
    let limits = control & 1 == 1 ? small : HTTPRequestParser.Limits()

    if control & 4 == 4 {
        checkRoute(photoRequest(rest))
        return 0
    }

    if control & 2 == 2 {
        // The body of a /play, as the parser would hand it over (with a Content-Type: without one, it is refused
        // before the body is read).
        checkRoute(
            HTTPRequest(
                method: "POST", path: "/play", headers: [("Content-Type", "application/x-apple-binary-plist")],
                body: rest))
        // And the answers a poll gets, for numbers from the input.
        var reader = ByteReader(rest)
        let duration = Double(reader.uint16()) / 7
        let playback = AirPlayPlayback.active(
            duration: duration, position: Double(reader.uint16()) / 3, rate: 1, stalled: reader.byte() & 1 == 1)
        checkAnswer(.plist(playback.playbackInfoBody()))
        checkAnswer(.text(.ok, playback.scrubText))
        return 0
    }

    let whole = run([rest], limits: limits)
    var random = InputRandom(seed: input)
    var pieces: [[UInt8]] = []
    var index = 0
    while index < rest.count {
        let count = random.below(8) == 0 ? random.below(2048) : random.below(16)
        pieces.append(Array(rest[index..<min(rest.count, index + count)]))
        index += count
    }
    var piecewise = run(pieces, limits: limits)
    invariant(piecewise.requests == whole.requests, "pieces gave other requests")
    invariant(
        piecewise.error == whole.error,
        "pieces gave another error: \(String(describing: piecewise.error)) vs \(String(describing: whole.error))")
    if let error = whole.error {
        invariant((400..<600).contains(error.status.code), "status \(error.status.code)")
        invariant((try? piecewise.parser.nextRequest()) == nil, "a failed parser went on")
        checkAnswer(.refusal(error))
    }
    for request in whole.requests {
        invariant(
            (1...16).contains(request.method.utf8.count)
                && request.method.utf8.allSatisfy { ($0 >= 0x41 && $0 <= 0x5A) || $0 == 0x5F || $0 == 0x2D },
            "method \(request.method)")
        invariant(
            request.path.hasPrefix("/") && request.path.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F },
            "path \(request.path)")
        invariant(request.headers.count <= limits.headerCount, "\(request.headers.count) headers")
        let bodyLimit = request.method == "PUT" && request.path == "/photo" ? limits.photoBody : limits.body
        invariant(request.body.count <= bodyLimit, "body of \(request.body.count)")
        invariant(
            request.body.count == Int(request.header("Content-Length") ?? "0"),
            "body length differs from Content-Length")
        checkRoute(request)
    }
    return 0
}
