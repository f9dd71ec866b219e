// The terminal of `cast send`: keys in (LiveKey) and the status line out (StatusLine, in CastSender).
import CastBase
import CastProtocol
import CastSender
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The terminal settings to put back at exit. Written once, before the reader starts; read by the atexit handler.
private let savedTerminal = Mutex<termios?>(nil)

/// Reads single keys from a terminal in non-canonical, no-echo mode on its own thread (a
/// blocking read), and restores the terminal when the process exits. Ctrl-C still raises SIGINT.
enum KeyReader {
    /// Starts reading when standard input is a terminal; false otherwise.
    static func start(onKey: @escaping @Sendable (LiveKey) -> Void) -> Bool {
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
                for key in LiveKey.take(from: &pending) { onKey(key) }
            }
        }
        return true
    }
}

/// Formats seconds as m:ss (`StatusLine.clock`: any number a receiver sends).
func clock(_ seconds: Double?) -> String {
    StatusLine.clock(seconds)
}
