// MirrorStream.Reader and MirrorCursor (issue 32: the mirror session's media, hostile input to the receiver): a stream
// fed in pieces of random sizes must give exactly the units (or the error) of a plain reading of the whole stream,
// and each cursor unit decodes to a cursor that encodes back to its payload, or is refused.
//
// Input: byte 0 = control (bit 0: put the magic first, so that the units are reached; bits 1-3: how often the rest
// repeats, capped at 64 KiB), bytes 1... = the stream. Piece sizes (0 to 4 KiB, mostly small) come from a generator
// seeded with the input.

private let repeats = [1, 1, 1, 2, 3, 7, 64, 300]

/// What the stream holds, read in one go: the reference the reader must agree with.
private func reference(_ stream: [UInt8]) -> (units: [MirrorStream.Unit], failed: Bool) {
    let magic = MirrorStream.magic
    guard stream.count >= magic.count else { return ([], !stream.elementsEqual(magic.prefix(stream.count))) }
    guard stream.prefix(magic.count).elementsEqual(magic) else { return ([], true) }
    var units: [MirrorStream.Unit] = []
    var index = magic.count
    while stream.count - index >= MirrorStream.unitHeaderLength {
        let length = stream[index..<index + 4].reduce(0) { $0 << 8 | Int($1) }
        guard (1...MirrorStream.maximumUnitLength).contains(length) else { return (units, true) }
        guard stream.count - index >= MirrorStream.unitHeaderLength + length else { break }
        let captured = stream[index + 4..<index + 12].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let start = index + MirrorStream.unitHeaderLength
        units.append(MirrorStream.Unit(captured: captured, payload: Array(stream[start..<start + length])))
        index = start + length
    }
    return (units, false)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = fuzzInput(data, size)
    guard let control = input.first else { return 0 }
    var stream: [UInt8] = control & 1 == 1 ? MirrorStream.magic : []
    for _ in 0..<repeats[Int(control >> 1 & 0x07)] where stream.count < 64 * 1024 {
        stream.append(contentsOf: input.dropFirst())
    }
    stream.removeSubrange(min(stream.count, 64 * 1024)...)

    var random = InputRandom(seed: input)
    var reader = MirrorStream.Reader()
    var units: [MirrorStream.Unit] = []
    var failed = false
    var fed = 0
    feeding: while fed < stream.count {
        let end = min(stream.count, fed + random.pieceLength(of: stream.count))
        stream[fed..<end].withUnsafeBytes { reader.append($0) }
        fed = end
        while true {
            do {
                guard let unit = try reader.next() else { break }
                units.append(unit)
            } catch {
                failed = true
                break feeding
            }
        }
    }

    let expected = reference(stream)
    invariant(failed == expected.failed, "failed \(failed) but a whole-stream read says \(expected.failed)")
    invariant(units == expected.units, "\(units.count) units differ from the \(expected.units.count) of a whole read")
    for unit in units {
        invariant(unit.encoded.count == MirrorStream.unitHeaderLength + unit.payload.count, "a unit's length")
        guard MirrorCursor.isCursor(unit.payload) else { continue }
        guard let cursor = try? MirrorCursor(decoding: unit.payload) else { continue }
        if let shape = cursor.shape {
            invariant(
                (1...MirrorCursor.maximumSide).contains(shape.width)
                    && (1...MirrorCursor.maximumSide).contains(shape.height),
                "a shape of \(shape.width)x\(shape.height)")
            invariant(shape.hotX < shape.width && shape.hotY < shape.height, "a hot spot outside the shape")
            invariant(shape.pixels.count == shape.width * shape.height * 4, "the pixels' length")
        }
        invariant(cursor.encoded == unit.payload, "a cursor does not encode back to its payload")
    }
    return 0
}
