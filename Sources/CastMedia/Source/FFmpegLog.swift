internal import CFFmpeg
import Foundation
import Synchronization

/// FFmpeg's own log lines (`av_log`: "[h264 @ 0x…] Invalid NAL unit size", "[http @ 0x…] HTTP error 404"), sent where
/// the program says, as whole lines with URL credentials removed.
///
/// By default they are dropped: a library prints nothing of its own on the host program's standard error (what
/// matters reaches the caller anyway, as a thrown `MediaError` or an error event with FFmpeg's message). castd
/// routes them through its logger; a program that wants FFmpeg's usual output routes them to standard error.
///
/// Once a URL is played FFmpeg may log URLs with userinfo (an HLS demuxer opening a segment or key): `://user:pass@`
/// is cut to `://` in every line before the sink sees it.
///
/// Thread-safety: FFmpeg calls the callback from any of its threads; the pending partial line, the sink and the
/// level are in a `Mutex`, and the sink is called outside it.
public enum FFmpegLog {
    /// How serious a line is, from FFmpeg's level (`AV_LOG_ERROR` and worse, `AV_LOG_WARNING`, `AV_LOG_INFO`).
    public enum Severity: Int, Sendable, Comparable {
        case info = 0
        case warning = 1
        case error = 2

        public static func < (a: Severity, b: Severity) -> Bool { a.rawValue < b.rawValue }

        init(level: Int32) {
            self = level <= AV_LOG_ERROR ? .error : level <= AV_LOG_WARNING ? .warning : .info
        }
    }

    /// Receives one whole line (no trailing newline), already redacted.
    public typealias Sink = @Sendable (Severity, String) -> Void

    /// Sends FFmpeg's lines of `minimum` severity or more to `sink`; nil drops every line. Replaces an earlier route.
    public static func route(to sink: Sink?, minimum: Severity = .warning) {
        install()
        state.withLock { state in
            state.sink = sink
            state.minimum = minimum
            state.pending = ""
        }
    }

    /// Installs the callback (idempotent): called before anything opens media, so FFmpeg's default callback, which
    /// writes to standard error, never runs.
    static func install() {
        _ = installed
    }

    private static let installed: Void = {
        av_log_set_callback(logCallback)
    }()

    /// The longest line passed on, in bytes; a line is cut there (FFmpeg's own lines are far shorter).
    static let maximumLineLength = 1024

    struct State {
        var sink: Sink?
        var minimum: Severity = .warning
        /// A line FFmpeg has begun but not ended (it may log one line in several calls).
        var pending = ""
        /// FFmpeg's `print_prefix` between calls.
        var printPrefix: Int32 = 1
    }

    static let state = Mutex(State())

    /// `text` cut to `maximumLineLength` bytes (a character cut in two becomes U+FFFD).
    private static func cut(_ text: String) -> String {
        text.utf8.count <= maximumLineLength
            ? text : String(decoding: text.utf8.prefix(maximumLineLength), as: UTF8.self)
    }

    /// Takes one formatted piece of a line; returns the whole lines it completes, for the sink.
    fileprivate static func take(_ piece: String, severity: Severity) -> (Sink, [String])? {
        state.withLock { state in
            guard let sink = state.sink, severity >= state.minimum else { return nil }
            var text = state.pending + piece
            var lines: [String] = []
            while let newline = text.firstIndex(of: "\n") {
                lines.append(String(text[..<newline]))
                text = String(text[text.index(after: newline)...])
            }
            state.pending = cut(text)
            let kept = lines.map { URLInput.redactingAll(cut($0)) }
            return kept.isEmpty ? nil : (sink, kept)
        }
    }
}

private func logCallback(
    _ object: UnsafeMutableRawPointer?, _ level: Int32, _ format: UnsafePointer<CChar>?, _ arguments: CVaListPointer?
) {
    guard level <= av_log_get_level(), let format, let arguments else { return }
    let severity = FFmpegLog.Severity(level: level)
    guard FFmpegLog.state.withLock({ $0.sink != nil && severity >= $0.minimum }) else { return }
    var buffer = [CChar](repeating: 0, count: FFmpegLog.maximumLineLength)
    let length = FFmpegLog.state.withLock { state in
        av_log_format_line2(object, level, format, arguments, &buffer, Int32(buffer.count), &state.printPrefix)
    }
    guard length > 0, let (sink, lines) = FFmpegLog.take(string(fromCBuffer: buffer), severity: severity) else {
        return
    }
    for line in lines { sink(severity, line) }
}

extension URLInput {
    /// `text` with the userinfo of every `scheme://user:pass@host` in it removed.
    static func redactingAll(_ text: String) -> String {
        guard text.contains("://"), text.contains("@") else { return text }
        var result = ""
        var rest = Substring(text)
        while let marker = rest.range(of: "://") {
            result += rest[..<marker.upperBound]
            rest = rest[marker.upperBound...]
            let authorityEnd = rest.firstIndex { "/?# \t\n'\"".contains($0) } ?? rest.endIndex
            if let at = rest[..<authorityEnd].lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        }
        return result + rest
    }
}
