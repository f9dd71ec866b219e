public import CastMedia
public import CastProtocol
public import Foundation

/// How a thumbnail's time is matched (MPMovieTimeOption): `.nearestKeyFrame` or `.exact`.
public typealias MovieTimeOption = ThumbnailTimeOption

extension MoviePlayerController {
    /// The userInfo key of a thumbnail notification's time (a `TimeInterval`): the actual time of the frame shown for
    /// an image, the time asked for with an error.
    public static let thumbnailTimeUserInfoKey = "MoviePlayerThumbnailTimeKey"
    /// The userInfo key of a thumbnail notification's image (a `Thumbnail`: PNG bytes and size).
    public static let thumbnailImageUserInfoKey = "MoviePlayerThumbnailImageKey"
    /// The userInfo key of a thumbnail notification's error (a `CastError`).
    public static let thumbnailErrorUserInfoKey = "MoviePlayerThumbnailErrorKey"

    /// The movie's metadata (title, artist, … and changing stream titles), as last reported; nil until the movie
    /// was opened (`.moviePlayerTimedMetadataUpdated`).
    public var timedMetadata: TimedMetadata? { state.withLock { $0.movie.timedMetadata } }

    /// The movie's audio and subtitle tracks (language, title, codec, which are selected), once it is open, here or on
    /// a receiver; empty before. `subtitleLanguage` chooses among the subtitle tracks.
    public var tracks: [MediaTrack] { state.withLock { $0.movie.tracks } }

    /// The access log of the movie (MPMovieAccessLog's events): one entry per playback of it, here or on a
    /// receiver, with start-up time, bit rates, stalls, dropped frames, bytes and time watched. An entry is added
    /// when a playback starts (a load, `play()` after `stop()`, a repeat, a move to or from a receiver) and kept
    /// when it ends, however it ends; the current one is brought up to date about once a second while it plays
    /// (and when it pauses or ends). Cleared when `contentURL` names another movie.
    public var accessLog: [AccessLogEntry] { state.withLock { $0.movie.accessLog } }

    /// The error log of the movie (MPMovieErrorLog's events): what failed, with its domain and status code.
    public var errorLog: [ErrorLogEntry] { state.withLock { $0.movie.errorLog } }

    /// The picture at `playbackTime` as PNG (at most 1920 pixels wide), or nil when it cannot be made, as the seeds'
    /// `thumbnailImage(atTime:timeOption:)`. Made here from `contentURL` whether the movie plays here or on a
    /// receiver (the file, or the URL, is read again). Blocks while it decodes. `thumbnailImage(at:timeOption:)`
    /// throws an error that says why instead.
    public func thumbnailImage(atTime playbackTime: TimeInterval, timeOption option: MovieTimeOption) -> Thumbnail? {
        try? thumbnailImage(at: playbackTime, timeOption: option)
    }

    /// The picture at `time` as PNG (at most 1920 pixels wide), made here from `contentURL` whether the movie plays
    /// here or on a receiver (the file, or the URL, is read again). Blocks while it decodes.
    /// - Throws: `CastError` `.usage` when there is no movie; `.playback` when the picture cannot be made (no video,
    ///   an unreadable file or time), saying why. (The seeds' `thumbnailImage(atTime:timeOption:)` returns nil; the
    ///   reason is worth having.)
    public func thumbnailImage(at time: TimeInterval, timeOption: MovieTimeOption) throws(CastError) -> Thumbnail {
        let thumbnailer = try thumbnailer()
        do {
            return try thumbnailer.image(at: time, option: timeOption)
        } catch {
            throw CastError(.playback, "no thumbnail at \(time) s: \(error)")
        }
    }

    /// Makes the pictures at `playbackTimes` one after the other, posting `.moviePlayerThumbnailImageRequestDidFinish`
    /// for each (in order) with the time and the image or the error. Returns at once. The seeds' spelling.
    public func requestThumbnailImages(atTimes playbackTimes: [TimeInterval], timeOption option: MovieTimeOption) {
        requestImages(at: playbackTimes, timeOption: option)
    }

    /// `requestThumbnailImages(atTimes:timeOption:)` under CastKit's first spelling.
    @available(*, deprecated, renamed: "requestThumbnailImages(atTimes:timeOption:)")
    public func requestThumbnailImages(at times: [TimeInterval], timeOption: MovieTimeOption) {
        requestImages(at: times, timeOption: timeOption)
    }

    private func requestImages(at times: [TimeInterval], timeOption: MovieTimeOption) {
        let thumbnailer: Thumbnailer
        do {
            thumbnailer = try self.thumbnailer()
        } catch {
            state.withLock { state in
                for time in times {
                    announce(.thumbnailRequestDidFinish(time: time, result: .failure(error)), in: state)
                }
            }
            return
        }
        thumbnailer.requestImages(at: times, option: timeOption) { [weak self] index, result in
            guard let self else { return }
            let outcome = result.mapError { CastError(.playback, $0.isCancelled ? "cancelled" : "\($0)") }
            state.withLock { state in
                announce(.thumbnailRequestDidFinish(time: times[index], result: outcome), in: state)
            }
        }
    }

    /// Cancels the requested thumbnails not made yet: each is posted with a "cancelled" error.
    public func cancelAllThumbnailImageRequests() {
        state.withLock { $0.thumbnailer }?.cancelAllRequests()
    }

    /// The thumbnailer of the current `contentURL`, made on first use.
    private func thumbnailer() throws(CastError) -> Thumbnailer {
        let made = state.withLock { state -> Result<Thumbnailer, CastError> in
            if let thumbnailer = state.thumbnailer { return .success(thumbnailer) }
            guard let url = state.contentURL else {
                return .failure(CastError(.usage, "no movie to make thumbnails of"))
            }
            let made: Thumbnailer
            if url.isFileURL {
                do {
                    made = Thumbnailer(source: try FileSource(path: url.path))
                } catch {
                    return .failure(CastError(.playback, "cannot open \(url.path): \(error)"))
                }
            } else {
                made = Thumbnailer(input: .url(url.absoluteString))
            }
            state.thumbnailer = made
            return .success(made)
        }
        return try made.get()
    }
}
