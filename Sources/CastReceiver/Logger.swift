import CastBase
import CastMedia
import CastProtocol
import Foundation

/// Where the receiver's log lines go. A value passed in (swift-log style), so the daemon decides
/// the destination and tests can capture lines.
public struct Logger: Sendable {
    /// How much a line matters.
    public enum Level: Int, Sendable, Comparable, CustomStringConvertible {
        /// Details for debugging.
        case debug = 0
        /// Things worth knowing: who connected, what plays.
        case info = 1
        /// Something is degraded but the receiver works.
        case warning = 2
        /// Something failed.
        case error = 3

        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        public var description: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .warning: "warning"
            case .error: "error"
            }
        }
    }

    private let sink: @Sendable (Level, String) -> Void

    /// A logger that hands each line to `sink`.
    public init(_ sink: @escaping @Sendable (Level, String) -> Void) {
        self.sink = sink
    }

    /// A logger that writes `castd: level: message` lines to standard error, dropping lines below `minimum`.
    public static func standardError(minimum: Level = .info) -> Logger {
        Logger { level, message in
            guard level >= minimum else { return }
            let line =
                message.hasPrefix(announcementMarker)
                ? String(message.dropFirst()) + "\n"
                : level == .info ? "castd: \(message)\n" : "castd: \(level): \(message)\n"
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    /// A line meant to be read by a person exactly as written (e.g. `Pairing PIN: 0427`), with
    /// no prefix: it goes to the sink at `.info` marked as an announcement. Only castd announces: no other
    /// line can begin with the marker, since every message is `printable` (the marker is a control character).
    public func announce(_ line: String) {
        sink(.info, Self.announcementMarker + printable(line))
    }

    /// Marks a line that a sink must print without its prefix.
    public static let announcementMarker = "\u{1}"

    /// Logs a line. Messages carry names and texts from the network (a sender's name, a title, an FFmpeg line about
    /// hostile media), so each is made `printable` here, once for every log site: no control character reaches
    /// the log, and a line is always one line.
    public func log(_ level: Level, _ message: @autoclosure () -> String) {
        sink(level, printable(message()))
    }

    /// Logs at `.debug`.
    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    /// Logs at `.info`.
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    /// Logs at `.warning`.
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    /// Logs at `.error`.
    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
}

extension Logger {
    /// Routes FFmpeg's own warnings and errors through this logger as `ffmpeg: [demuxer @ 0x…] …` lines. FFmpeg's
    /// errors are the media's (a damaged packet, a missing atom), not castd's: they are logged as warnings, and the
    /// session's sender hears the outcome as an event.
    public func takeFFmpegLines() {
        FFmpegLog.route(to: { severity, line in
            log(severity == .error ? .warning : .info, "ffmpeg: \(line)")
        })
    }
}
