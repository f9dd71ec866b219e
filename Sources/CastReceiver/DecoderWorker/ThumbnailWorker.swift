import CastMedia
import CastProtocol
import Foundation
import Glibc

/// A worker that makes a session's thumbnails (`castd --session-worker`, started with `thumbnails` in its start
/// message; see `ThumbnailProcess` for castd's side). It has confined itself and set the limits like a session's
/// worker, then serves `thumbnailRequest` and `thumbnailCancel` with a `Thumbnailer` on the media (a served file
/// read over the channel, or the URL) and answers with `thumbnail` parts, in order. It exits when castd closes the
/// channel, and dies with castd.
enum ThumbnailWorker {
    static func run(channel: WorkerChannel, start: WorkerStart) -> Never {
        let served = start.media.map { ChannelSource(channel: channel, media: $0) }
        let thumbnailer = Thumbnailer(
            input: served.map { .source($0) }
                ?? .url(start.url ?? "", proxy: start.urlProxy, formats: start.urlFormats ?? .any))
        // This thread only reads the channel: the thumbnailer decodes on a thread of its own, whose reads of served
        // media are answered through `deliver` from here.
        while true {
            let message: WorkerMessage?
            do { message = try channel.receive() } catch { message = nil }
            guard let message else {
                // castd closed the channel (the session ended) or broke it.
                served?.cancel()
                thumbnailer.close()
                exit(0)
            }
            switch message {
            case .thumbnailRequest(let request):
                let times = request.times
                thumbnailer.requestImages(
                    at: times, option: request.exact ? .exact : .nearestKeyFrame, maximumWidth: request.maxWidth,
                    maximumBytes: ThumbnailPart.maximumImageBytes
                ) { index, result in
                    for part in ThumbnailPart.answer(result, request: request.request, index: index, time: times[index])
                    {
                        try? channel.send(.thumbnail(part))
                    }
                }
            case .thumbnailCancel: thumbnailer.cancelAllRequests()
            case .data, .readFailed: served?.deliver(message)
            case .confine, .confined, .start, .control, .read, .event, .unacceptableEvent, .thumbnail: break
            }
        }
    }
}
