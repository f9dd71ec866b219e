// RTSPResponseParser: what a speaker sends on the RTSP connection, fed in pieces of random sizes.
//
// Input: the byte stream. Piece sizes (0 to 2 KiB, mostly small) come from a generator seeded with the input.
//
// Invariants: the responses (and the error) are exactly those of feeding the whole stream at once; every response
// keeps the parser's bounds (status 100...999, at most 64 headers, a body of at most 64 KiB that matches its
// Content-Length, header names without separators, values without CR/LF/NUL); only `malformedResponse` or
// `responseTooLarge` is thrown; the parser never holds more than the head limit plus one piece plus a body.

private func parseWhole(_ stream: [UInt8]) -> (responses: [RTSPResponse], error: RAOPError.Code?) {
    var parser = RTSPResponseParser()
    parser.append(stream)
    var responses: [RTSPResponse] = []
    while true {
        do {
            guard let response = try parser.nextResponse() else { return (responses, nil) }
            responses.append(response)
        } catch {
            return (responses, error.code)
        }
    }
}

private func check(_ response: RTSPResponse) {
    invariant((100...999).contains(response.status), "status \(response.status)")
    invariant(response.headers.count <= RTSPResponseParser.maximumHeaderCount, "\(response.headers.count) headers")
    invariant(response.body.count <= RTSPResponseParser.maximumBodyBytes, "body of \(response.body.count)")
    let declared = response.header("Content-Length").flatMap { Int($0) } ?? 0
    invariant(declared == response.body.count, "Content-Length \(declared), body \(response.body.count)")
    for (name, value) in response.headers {
        invariant(
            !name.isEmpty && !name.contains(where: { " \t:\r\n".contains($0) }), "header name \(name.debugDescription)")
        invariant(!value.contains(where: { "\r\n\0".contains($0) }), "header value \(value.debugDescription)")
    }
    invariant(!response.reason.contains(where: { "\r\n\0".contains($0) }), "reason \(response.reason.debugDescription)")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let stream = fuzzInput(data, size)
    let reference = parseWhole(stream)
    var random = InputRandom(seed: stream)
    var parser = RTSPResponseParser()
    var responses: [RTSPResponse] = []
    var thrown: RAOPError.Code?
    var fed = 0
    feeding: while fed < stream.count {
        let piece = random.below(4) == 0 ? random.below(2048) : random.below(16)
        let end = min(stream.count, fed + piece)
        parser.append(stream[fed..<end])
        fed = end
        while true {
            do {
                guard let response = try parser.nextResponse() else { break }
                check(response)
                responses.append(response)
            } catch {
                invariant(error.code == .malformedResponse || error.code == .responseTooLarge, "thrown \(error.code)")
                thrown = error.code
                break feeding
            }
        }
        invariant(
            parser.bufferedByteCount <= RTSPResponseParser.maximumHeadBytes + 4 + 2048
                + RTSPResponseParser.maximumBodyBytes,
            "the parser holds \(parser.bufferedByteCount) bytes")
    }
    invariant(
        responses == reference.responses, "pieces gave \(responses.count) responses, whole \(reference.responses.count)"
    )
    invariant(
        thrown == reference.error,
        "pieces threw \(String(describing: thrown)), whole \(String(describing: reference.error))")
    return 0
}
