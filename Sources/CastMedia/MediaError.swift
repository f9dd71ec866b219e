internal import CFFmpeg
import Glibc

/// A failure of the engine, its source or its devices; `description` is the message reported with `playbackError`.
public struct MediaError: Error, Sendable, CustomStringConvertible {
    private enum Code: Sendable {
        case ffmpeg(Int32)
        case system(Int32)
        case alsa(Int32)
        case source
        case cancelled
        case other
    }

    private let code: Code
    /// What failed and why, including the library's own error text.
    public let description: String

    private init(code: Code, description: String) {
        self.code = code
        self.description = description
    }

    /// An FFmpeg call returned `status` (an AVERROR).
    static func ffmpeg(_ function: String, status: Int32) -> MediaError {
        MediaError(code: .ffmpeg(status), description: "\(function): \(ffmpegMessage(status))")
    }

    /// A system call failed with `errno`.
    static func system(_ function: String, errno code: Int32) -> MediaError {
        MediaError(code: .system(code), description: "\(function): \(String(cString: strerror(code)))")
    }

    /// An ALSA call returned `status` (a negative errno).
    static func alsa(_ function: String, status: Int32, message: String) -> MediaError {
        MediaError(code: .alsa(status), description: "\(function): \(message)")
    }

    /// The source (a sender's media connection, a file) failed under FFmpeg; `description` says how.
    static func source(_ description: String) -> MediaError {
        MediaError(code: .source, description: description)
    }

    /// The work was cancelled before it was done (a thumbnail request, by `Thumbnailer.cancelAllRequests`).
    static let cancelled = MediaError(code: .cancelled, description: "cancelled")

    /// Whether this error says the work was cancelled, not that it failed.
    public var isCancelled: Bool {
        if case .cancelled = code { return true }
        return false
    }

    /// Anything else.
    static func other(_ description: String) -> MediaError {
        MediaError(code: .other, description: description)
    }

    /// Which layer failed, for the error log: `http` (a server's refusal), `ffmpeg`, `system`, `alsa`, `source`,
    /// `cancelled`, `other`.
    var domain: String {
        switch code {
        case .ffmpeg: httpStatus != nil ? "http" : "ffmpeg"
        case .system: "system"
        case .alsa: "alsa"
        case .source: "source"
        case .cancelled: "cancelled"
        case .other: httpStatus != nil ? "http" : "other"
        }
    }

    /// The code for the error log: the HTTP status of a server's refusal, else the AVERROR, errno or ALSA status.
    var statusCode: Int? {
        if let httpStatus { return httpStatus }
        switch code {
        case .ffmpeg(let status), .system(let status), .alsa(let status): return Int(status)
        case .source, .cancelled, .other: return nil
        }
    }

    /// The HTTP status in FFmpeg's message (`Server returned 401 Unauthorized`, `HTTP error 404 Not Found`).
    private var httpStatus: Int? {
        for marker in ["Server returned ", "HTTP error "] {
            guard let range = description.range(of: marker) else { continue }
            let digits = description[range.upperBound...].prefix(3)
            if digits.count == 3, let status = Int(digits), (100...599).contains(status) { return status }
        }
        return nil
    }

    /// The FFmpeg status carried, when this error came from FFmpeg.
    var ffmpegStatus: Int32? {
        if case .ffmpeg(let status) = code { return status }
        return nil
    }
}

/// FFmpeg's text for an AVERROR (av_strerror).
func ffmpegMessage(_ status: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    av_strerror(status, &buffer, buffer.count)
    return string(fromCBuffer: buffer)
}

/// Checks an FFmpeg status: returns it when non-negative, throws `MediaError.ffmpeg` otherwise.
@discardableResult
func checkFFmpeg(_ function: String, _ status: Int32) throws -> Int32 {
    guard status >= 0 else { throw MediaError.ffmpeg(function, status: status) }
    return status
}

/// The text in a NUL-terminated C buffer.
func string(fromCBuffer buffer: [CChar]) -> String {
    let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    return String(decoding: bytes, as: UTF8.self)
}
