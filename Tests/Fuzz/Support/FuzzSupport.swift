// Shared by every fuzz target (scripts/fuzz compiles it into each one).
// Not part of the package: Package.swift declares no target for Tests/Fuzz.

/// Stops the fuzzer with a message when an invariant does not hold: libFuzzer records the input
/// as a crash (the trap is a deadly signal), and the message says which invariant broke.
@inline(never)
func invariant(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    if !condition() {
        fatalError("fuzz invariant violated: \(message())", file: file, line: line)
    }
}

/// The fuzzer's input as a buffer.
func fuzzInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    guard let data, size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: size))
}

/// Reads structured values off the front of the input; runs dry gracefully (zeros, empty slices).
struct ByteReader {
    let bytes: [UInt8]
    private(set) var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { position >= bytes.count }
    var remaining: Int { max(0, bytes.count - position) }

    mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func uint16() -> UInt16 { UInt16(byte()) << 8 | UInt16(byte()) }

    /// Up to `count` bytes (fewer at the end of the input).
    mutating func take(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, position + max(0, count))
        defer { position = end }
        return position < end ? Array(bytes[position..<end]) : []
    }

    mutating func rest() -> [UInt8] { take(remaining) }
}

/// A small deterministic generator seeded from the input itself (FNV-1a), for choices such as
/// chunk sizes that should vary with the input without eating its bytes.
struct InputRandom {
    private var state: UInt64

    init(seed bytes: [UInt8], salt: UInt64 = 0) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ salt
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        state = hash == 0 ? 0x9e37_79b9_7f4a_7c15 : hash
    }

    /// xorshift64*.
    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_f491_4f6c_dd1d
    }

    mutating func below(_ bound: Int) -> Int { bound <= 1 ? 0 : Int(next() % UInt64(bound)) }

    /// How many bytes of a stream of `count` to feed a parser next, as a network delivers them: nothing, a few, a few
    /// hundred or up to 4 KiB; a long (repeated) stream mostly in big pieces, since 96 KiB byte by byte would be slow.
    mutating func pieceLength(of count: Int) -> Int {
        switch count > 4096 ? 4 + below(4) : below(8) {
        case 0: return 0
        case 1...4: return 1 + below(8)
        case 5, 6: return 1 + below(300)
        default: return 1 + below(4096)
        }
    }
}
