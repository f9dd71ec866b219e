// FrameDecoder: a byte stream fed in pieces of random sizes must give exactly the frames (or the error)
// that a plain reading of the whole stream gives.
//
// Input: byte 0 = control (bits 0-1: the decoder's limit; bits 2-4: how often the rest repeats, to reach
// streams above 64 KiB and the decoder's compaction; capped at 96 KiB), bytes 1... = the stream. Piece sizes (0 to 4 KiB,
// mostly small) come from a generator seeded with the input.

private let limits = [1, 17, 300, FrameDecoder.defaultMaximumFrameLength]
private let repeats = [1, 1, 1, 2, 3, 7, 64, 300]

/// What the stream holds, read in one go: the reference the decoder must agree with.
private func reference(_ stream: [UInt8], limit: Int) -> (frames: [Frame], error: ProtocolError.Code?, consumed: Int) {
    var frames: [Frame] = []
    var index = 0
    while stream.count - index >= 4 {
        let length =
            Int(stream[index]) << 24 | Int(stream[index + 1]) << 16 | Int(stream[index + 2]) << 8
            | Int(stream[index + 3])
        if length == 0 { return (frames, .emptyFrame, index) }
        if length > limit { return (frames, .frameTooLarge, index) }
        guard stream.count - index >= 4 + length else { break }
        frames.append(Frame(type: stream[index + 4], payload: Array(stream[(index + 5)..<(index + 4 + length)])))
        index += 4 + length
    }
    return (frames, nil, index)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = fuzzInput(data, size)
    guard let control = input.first else { return 0 }
    let limit = limits[Int(control & 0x03)]
    let body = input.dropFirst()
    // At most 96 KiB: past the decoder's 64 KiB compaction point, small enough to stay fast.
    var stream: [UInt8] = []
    for _ in 0..<repeats[Int(control >> 2 & 0x07)] where stream.count < 96 * 1024 { stream.append(contentsOf: body) }
    stream.removeSubrange(min(stream.count, 96 * 1024)...)

    var random = InputRandom(seed: input)
    var decoder = FrameDecoder(maximumFrameLength: limit)
    var frames: [Frame] = []
    var thrown: ProtocolError?
    var fed = 0
    feeding: while fed < stream.count {
        let end = min(stream.count, fed + random.pieceLength(of: stream.count))
        decoder.feed(stream[fed..<end])
        fed = end
        while true {
            do {
                guard let frame = try decoder.nextFrame() else { break }
                frames.append(frame)
            } catch {
                thrown = error
                break feeding
            }
        }
    }

    let expected = reference(stream, limit: limit)
    invariant(frames.count <= stream.count / 5, "\(frames.count) frames from \(stream.count) bytes")
    if let thrown {
        invariant(
            thrown.code == .emptyFrame || thrown.code == .frameTooLarge, "unexpected error code \(thrown.code)")
    }
    invariant(
        thrown?.code == expected.error,
        "error \(String(describing: thrown)) but a whole-stream read gives \(String(describing: expected.error))")
    invariant(
        frames == expected.frames,
        "\(frames.count) frames differ from the \(expected.frames.count) of a whole-stream read")
    for frame in frames {
        invariant(
            frame.payload.count + 1 <= limit,
            "a frame body of \(frame.payload.count + 1) bytes passed the limit \(limit)")
    }
    let reencoded = frames.flatMap { $0.encoded() }
    invariant(
        reencoded.count == expected.consumed, "re-encoded \(reencoded.count) bytes, consumed \(expected.consumed)")
    invariant(reencoded[...] == stream[..<expected.consumed], "re-encoded frames differ from the consumed prefix")
    if thrown == nil {
        invariant(
            decoder.hasPartialFrame == (expected.consumed < stream.count),
            "hasPartialFrame \(decoder.hasPartialFrame) with \(stream.count - expected.consumed) bytes left")
        // Draining again gives nothing more.
        do {
            let extra = try decoder.nextFrame()
            invariant(extra == nil, "a frame appeared after the stream was drained")
        } catch {
            invariant(false, "drained decoder threw \(error)")
        }
    }
    return 0
}
