// The terminal of `cast send`: keys in (space, q, arrows) and the status line out.
import CastProtocol
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A key `cast send` acts on.
enum Key: Sendable {
    /// Space: pause or resume.
    case space
    /// q: stop.
    case quit
    /// ←/→: seek 10 s back / forward.
    case left, right
    /// ↑/↓: volume up / down.
    case up, down
    /// n: the next source of a queue.
    case next
}

/// The terminal settings to put back at exit. Written once, before the reader starts; read by the atexit handler.
private let savedTerminal = Mutex<termios?>(nil)

/// Reads single keys from a terminal in non-canonical, no-echo mode on its own thread (a
/// blocking read), and restores the terminal when the process exits. Ctrl-C still raises SIGINT.
enum KeyReader {
    /// Starts reading when standard input is a terminal; false otherwise.
    static func start(onKey: @escaping @Sendable (Key) -> Void) -> Bool {
        guard isatty(0) == 1 else { return false }
        var settings = termios()
        guard tcgetattr(0, &settings) == 0 else { return false }
        savedTerminal.withLock { $0 = settings }
        atexit {
            if var saved = savedTerminal.withLock({ $0 }) { tcsetattr(0, TCSANOW, &saved) }
        }
        settings.c_lflag &= ~tcflag_t(ICANON | ECHO)
        tcsetattr(0, TCSANOW, &settings)
        startDetachedThread(name: "cast keys") {
            var pending: [UInt8] = []
            var byte: UInt8 = 0
            while read(0, &byte, 1) == 1 {
                pending.append(byte)
                if let (key, used) = decode(pending) {
                    pending.removeFirst(used)
                    if let key { onKey(key) }
                } else if pending.count > 3 {
                    pending.removeAll()
                }
            }
        }
        return true
    }

    /// A key from the bytes so far and how many bytes it used (nil key: bytes to skip), or nil
    /// when an escape sequence is still incomplete.
    static func decode(_ bytes: [UInt8]) -> (Key?, Int)? {
        guard let first = bytes.first else { return nil }
        switch first {
        case UInt8(ascii: " "): return (.space, 1)
        case UInt8(ascii: "q"), UInt8(ascii: "Q"): return (.quit, 1)
        case UInt8(ascii: "n"), UInt8(ascii: "N"): return (.next, 1)
        case 0x1B:
            guard bytes.count >= 3 else { return nil }
            guard bytes[1] == UInt8(ascii: "[") || bytes[1] == UInt8(ascii: "O") else { return (nil, 1) }
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
}

/// Formats seconds as m:ss.
func clock(_ seconds: Double?) -> String {
    guard let seconds, seconds.isFinite, seconds >= 0 else { return "--:--" }
    let whole = Int(seconds)
    return "\(whole / 60):" + (whole % 60 < 10 ? "0" : "") + "\(whole % 60)"
}

/// The live status line of `cast send` on a terminal (mpv-like): state, position / duration, bar.
struct StatusLine {
    /// What the events said so far.
    var playback = PlaybackSnapshot()
    var title: String

    func render(width: Int = 24) -> String {
        let (state, duration, position) = (playback.state, playback.duration, playback.position?.seconds)
        let volume = playback.volume.map { $0.muted ? 0 : $0.level }
        let symbol: String
        switch state {
        case .playing: symbol = "▶"
        case .paused: symbol = "⏸"
        case .stopped: symbol = "■"
        case .interrupted: symbol = "…"
        case .seekingForward: symbol = "⏩"
        case .seekingBackward: symbol = "⏪"
        }
        var bar = ""
        if let duration, duration > 0, let position {
            let filled = min(width, max(0, Int((position / duration) * Double(width))))
            bar = "  [" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]"
        }
        let level = volume.map { "  vol \(Int(($0 * 100).rounded()))%" } ?? ""
        let buffering =
            (playback.isStalled ? "  buffering" : "") + (playback.bufferedAhead.map { "  buf \(Int($0))s" } ?? "")
        return
            "\(symbol) \(state.rawValue)\(buffering)  \(clock(position)) / \(clock(duration))\(bar)\(level)  \(title)"
    }
}
