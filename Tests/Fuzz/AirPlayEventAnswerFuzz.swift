// AirPlayEventAnswerReader: what an AirPlay client sends back on its reverse connection (`POST /reverse`), the
// answers to castd's `POST /event` requests, fed in pieces of random sizes.
//
// Input: the byte stream. Piece sizes (0 to 2 KiB, mostly small) come from a generator seeded with the input.
//
// Invariants: the statuses (and whether it threw) are exactly those of feeding the whole stream at once; every status
// is 100...599; only 400, 413 and 431 are thrown; the reader never holds more than a head's limit and its end.

private func readWhole(_ stream: [UInt8]) -> (statuses: [Int], thrown: HTTPStatus?) {
    var reader = AirPlayEventAnswerReader()
    do {
        return (try reader.feed(stream), nil)
    } catch {
        return ([], error.status)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let stream = fuzzInput(data, size)
    let whole = readWhole(stream)
    var random = InputRandom(seed: stream)
    var reader = AirPlayEventAnswerReader()
    var statuses: [Int] = []
    var thrown: HTTPStatus?
    var fed = 0
    while fed < stream.count {
        let piece = random.below(4) == 0 ? random.below(2048) : random.below(16)
        let end = min(stream.count, fed + piece)
        do {
            statuses += try reader.feed(Array(stream[fed..<end]))
        } catch {
            invariant([400, 413, 431].contains(error.status.code), "thrown \(error.status.code)")
            thrown = error.status
            break
        }
        fed = end
        invariant(
            reader.bufferedByteCount <= AirPlayEventAnswerReader.maximumHeadLength + 3,
            "the reader holds \(reader.bufferedByteCount) bytes")
    }
    invariant(statuses.allSatisfy { (100...599).contains($0) }, "statuses \(statuses)")
    // Whole, a stream that fails yields no statuses; in pieces, those before the failure came first.
    if let thrown {
        invariant(whole.thrown == thrown, "pieces threw \(thrown.code), whole \(String(describing: whole.thrown))")
    } else {
        invariant(whole.thrown == nil, "whole threw \(String(describing: whole.thrown)), pieces did not")
        invariant(statuses == whole.statuses, "pieces gave \(statuses), whole \(whole.statuses)")
    }
    return 0
}
