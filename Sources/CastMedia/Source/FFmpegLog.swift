internal import CFFmpeg
import Foundation

/// FFmpeg's own log lines, with URL credentials removed. Once a URL is played, FFmpeg may print URLs that carry
/// userinfo (an HLS demuxer opening a segment or key); this callback writes every line as FFmpeg's default one
/// does (to standard error, at the level `av_log_get_level()` allows), with `://user:pass@` cut to `://`.
enum FFmpegLog {
    /// Installs the redacting callback; idempotent.
    static func redactCredentials() {
        _ = installed
    }

    private static let installed: Void = {
        av_log_set_callback(redactingCallback)
    }()

    /// FFmpeg's `print_prefix` state between calls (a line may arrive in parts), guarded by `lock`.
    nonisolated(unsafe) static var printPrefix: Int32 = 1
    static let lock = NSLock()
}

private func redactingCallback(
    _ object: UnsafeMutableRawPointer?, _ level: Int32, _ format: UnsafePointer<CChar>?, _ arguments: CVaListPointer?
) {
    guard level <= av_log_get_level(), let format, let arguments else { return }
    var buffer = [CChar](repeating: 0, count: 1024)
    let length = FFmpegLog.lock.withLock {
        av_log_format_line2(object, level, format, arguments, &buffer, Int32(buffer.count), &FFmpegLog.printPrefix)
    }
    guard length > 0 else { return }
    let line = URLInput.redactingAll(string(fromCBuffer: buffer))
    FileHandle.standardError.write(Data(line.utf8))
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
