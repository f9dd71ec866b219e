import CastMedia
import CastProtocol
import Foundation

/// Where a session's thumbnails are made: in a worker process of their own (`ThumbnailProcess`, with decoder
/// isolation on) or here (`LocalThumbnails`). Either reads the media apart from the engine: a served file over the
/// same media connection (its reads take turns with the engine's), a URL opened a second time.
///
/// Each time of a request is answered exactly once on the requester's connection, in order (requests one after
/// another): the PNG in parts, or one error part.
protocol SessionThumbnails: AnyObject, Sendable {
    /// Makes the images of `request` and answers each of its times on `writer`'s connection.
    func request(_ request: ThumbnailRequest, writer: MessageWriter)
    /// Answers every time not answered yet with `cancelled`; later requests are served.
    func cancelAll()
    /// The session ended: every time not answered yet is answered `cancelled`, and nothing more is made.
    func close()
}

extension ThumbnailPart {
    /// The messages that answer time `index` of request `request`: the image in parts, or its error (`cancelled`
    /// for a cancelled time, else the engine's message, cut to the protocol's text bound).
    static func answer(
        _ result: Result<Thumbnail, MediaError>, request: UInt32, index: Int, time: Double
    ) -> [ThumbnailPart] {
        switch result {
        case .success(let image):
            return ThumbnailPart.parts(
                of: image.png, request: request, index: index, time: time, actualTime: image.time, width: image.width,
                height: image.height)
        case .failure(let error):
            let word = error.isCancelled ? ThumbnailPart.cancelled : String(error.description.prefix(maximumTextLength))
            return [ThumbnailPart(request: request, index: index, time: time, error: word)]
        }
    }
}

/// Thumbnails made inside castd (`--decoder-isolation off`): a `Thumbnailer` on the session's input.
final class LocalThumbnails: SessionThumbnails {
    private let thumbnailer: Thumbnailer

    init(input: MediaInput) {
        thumbnailer = Thumbnailer(input: input)
    }

    func request(_ request: ThumbnailRequest, writer: MessageWriter) {
        let times = request.times
        let id = request.request
        thumbnailer.requestImages(
            at: times, option: request.exact ? .exact : .nearestKeyFrame, maximumWidth: request.maxWidth,
            maximumBytes: ThumbnailPart.maximumImageBytes
        ) { index, result in
            for part in ThumbnailPart.answer(result, request: id, index: index, time: times[index]) {
                try? writer.send(.thumbnail(part))
            }
        }
    }

    func cancelAll() { thumbnailer.cancelAllRequests() }
    func close() { thumbnailer.close() }
}
