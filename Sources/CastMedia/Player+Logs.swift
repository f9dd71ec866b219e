public import CastProtocol
import Foundation

/// What the access log needs beyond the buffering bookkeeping. Guarded by `Player.lock`.
struct LogState {
    /// When playback was asked for (the configuration's request date, or `start()`).
    var requested: Date?
    /// When playback started: the first frame or sample was presented and the clock was set going (after the wait
    /// before the start, when there was one), or the first frame was shown paused.
    var firstFrame: Date?
}

extension Player {
    /// The access log entry so far (MPMovieAccessLogEvent): sent at the finish, and when asked for. Thread-safe.
    public func accessLog() -> AccessLogEntry { accessLogEntry(closing: false) }

    /// The entry; `closing`: the finish (a stall in progress counts up to now).
    func accessLogEntry(closing: Bool) -> AccessLogEntry {
        let watched = clock.played()
        return shared.withLock { state in
            let requested = state.log.requested ?? Date()
            let input = inputStatisticsLocked(state)
            let byteRate = state.buffering.byteRate
            return AccessLogEntry(
                uri: inputURI, serverAddress: inputServerAddress,
                playbackStartDate: requested.timeIntervalSince1970,
                startupTime: state.log.firstFrame.map { max($0.timeIntervalSince(requested), 0) },
                indicatedBitrate: byteRate.map { ($0 * 8).rounded() },
                observedBitrate: input.readingTime > 0 ? (Double(input.bytes) * 8 / input.readingTime).rounded() : nil,
                stalls: state.buffering.stalls, stallDuration: stallSecondsLocked(state),
                droppedFrames: state.droppedVideoFrames, bytesTransferred: input.bytes,
                transferDuration: input.readingTime, durationWatched: watched)
        }
    }

    /// The error log entry for `error` (MPMovieErrorLogEvent): the HTTP status when a server refused, FFmpeg's,
    /// the system's or ALSA's code otherwise, and the message.
    func errorLogEntry(for error: any Error) -> ErrorLogEntry {
        let media = error as? MediaError
        let comment = String("\(error)".prefix(1024))
        return ErrorLogEntry(
            date: Date().timeIntervalSince1970, uri: inputURI, serverAddress: inputServerAddress,
            statusCode: media?.statusCode, domain: media?.domain ?? "other", comment: comment)
    }

    /// What plays, for the logs: the URL without credentials, or the source's name.
    var inputURI: String? {
        switch input {
        case .url(let url, _, _): URLInput.redacted(url)
        case .source(let source): source.nameHint
        }
    }

    /// The server of a URL, `host[:port]` as the URL names it; nil for a source (its owner knows where it reads).
    var inputServerAddress: String? {
        guard case .url(let url, _, _) = input else { return nil }
        let rest = URLInput.redacted(url)
        guard let start = rest.range(of: "://") else { return nil }
        let authority = rest[start.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        return authority.isEmpty ? nil : String(authority)
    }
}
