// The keys of cast's live view (cast send, cast queue) and the bytes a terminal sends for them.

/// A key the live view acts on.
public enum LiveKey: Sendable, Equatable, CaseIterable {
    /// Space: pause or resume.
    case space
    /// q: stop and exit.
    case quit
    /// ←/→: seek back / forward (`LiveViewRules.seekStep`).
    case left, right
    /// ↑/↓: volume up / down (`LiveViewRules.volumeStep`).
    case up, down
    /// n or >: the next source of a queue.
    case next
    /// p or <: the start of the current source, or the previous one (`LiveViewRules.restartAfter`).
    case previous

    /// The keys in `pending` (bytes read from the terminal so far), taken out of it; what does not make a known key is
    /// dropped, and an incomplete escape sequence stays for the next bytes (at most 3 bytes of it).
    public static func take(from pending: inout [UInt8]) -> [LiveKey] {
        var keys: [LiveKey] = []
        while let (key, used) = decode(pending) {
            pending.removeFirst(used)
            if let key { keys.append(key) }
        }
        if pending.count > 3 { pending.removeAll() }
        return keys
    }

    /// A key from the bytes read so far and how many bytes it used (a nil key: bytes to skip, a key the view does not
    /// know), or nil when an escape sequence is still incomplete.
    public static func decode(_ bytes: [UInt8]) -> (LiveKey?, Int)? {
        guard let first = bytes.first else { return nil }
        switch first {
        case UInt8(ascii: " "): return (.space, 1)
        case UInt8(ascii: "q"), UInt8(ascii: "Q"): return (.quit, 1)
        case UInt8(ascii: "n"), UInt8(ascii: "N"), UInt8(ascii: ">"): return (.next, 1)
        case UInt8(ascii: "p"), UInt8(ascii: "P"), UInt8(ascii: "<"): return (.previous, 1)
        case 0x1B:
            guard bytes.count >= 3 else { return bytes.count == 1 || isIntroducer(bytes[1]) ? nil : (nil, 1) }
            guard isIntroducer(bytes[1]) else { return (nil, 1) }
            switch bytes[2] {
            case UInt8(ascii: "A"): return (.up, 3)
            case UInt8(ascii: "B"): return (.down, 3)
            case UInt8(ascii: "C"): return (.right, 3)
            case UInt8(ascii: "D"): return (.left, 3)
            default: return (nil, 3)
            }
        default: return (nil, 1)
        }
    }

    /// `[` (CSI) or `O` (SS3, application cursor mode): what follows ESC in an arrow key.
    private static func isIntroducer(_ byte: UInt8) -> Bool { byte == UInt8(ascii: "[") || byte == UInt8(ascii: "O") }
}
