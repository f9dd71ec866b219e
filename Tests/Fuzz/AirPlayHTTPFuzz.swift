// The AirPlay video server's input side: HTTPRequestParser on a byte stream fed in pieces, then the route rules
// (AirPlayRequest, with the /play body's binary/XML property list or text parameters) on each request.
//
// Input: byte 0 = control (bit 0: small limits, so every bound is reached; bit 1: the rest is a /play body
// rather than a stream); bytes 1... = the stream or the body. Piece sizes (0 to 2 KiB, mostly small) come from
// a generator seeded with the input.
//
// Invariants: no trap; feeding in pieces gives exactly the requests (and the error) of feeding the whole stream
// at once; an error is a 4xx/5xx and the parser stays failed; a request has an upper-case method of 1...16,
// a path starting with "/" of printable ASCII, at most the header count, a body within the limit that matches
// its Content-Length; a decoded route is one the table holds for that method, a /play URL passes the same check
// as a Cast play.url and its start is in range, a rate is 0 or 0.5...2, a seek finite and >= 0; every answer
// (refusal or playback-info) encodes with a Content-Length equal to its body.

private let small: HTTPRequestParser.Limits = {
    var limits = HTTPRequestParser.Limits()
    limits.requestLine = 64
    limits.head = 256
    limits.headerCount = 4
    limits.body = 128
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
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = fuzzInput(data, size)
    guard let control = input.first else { return 0 }
    let rest = Array(input.dropFirst())
    let limits = control & 1 == 1 ? small : HTTPRequestParser.Limits()

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
        invariant(request.body.count <= limits.body, "body of \(request.body.count)")
        invariant(
            request.body.count == Int(request.header("Content-Length") ?? "0"),
            "body length differs from Content-Length")
        checkRoute(request)
    }
    return 0
}
