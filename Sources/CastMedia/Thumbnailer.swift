internal import CFFmpeg
import CastBase
import CastProtocol
import Foundation
import Synchronization

/// How a thumbnail's time is matched (the seeds' MPMovieTimeOption).
public enum ThumbnailTimeOption: String, Sendable, CaseIterable {
    /// The key frame at or before the time: one seek and one decoded frame.
    case nearestKeyFrame
    /// The frame shown at the time (whose interval contains it), decoded forward from the key frame before it.
    case exact
}

/// An image of a video at a time, as PNG.
public struct Thumbnail: Sendable, Equatable {
    /// The time asked for, in seconds.
    public var requestedTime: Double
    /// The media time of the frame in the image, in seconds.
    public var time: Double
    /// The image's size in pixels (the picture's display size, after the sample aspect ratio, bounded).
    public var width: Int
    public var height: Int
    /// The PNG file's bytes (FFmpeg's PNG encoder; RGB, or RGBA when the video has alpha).
    public var png: [UInt8]
}

/// Makes images of a video at given times: synchronously (`image(at:option:)`) or as an asynchronous batch with one
/// result per time and a cancel-all (the seeds' `thumbnailImage(at:timeOption:)`,
/// `requestThumbnailImages(at:timeOption:)` and `cancelAllThumbnailImageRequests`).
///
/// It opens its own demuxer and decoder on the input, apart from any `Player` that plays it, on first use.
///
/// Thread-safe: every method may be called from any thread. One image is made at a time (a lock serialises the
/// FFmpeg work, which blocks: callers of `image(at:)` wait their turn); batches run on a thread of the thumbnailer's
/// own, which delivers their results in order.
public final class Thumbnailer: Sendable {

    /// The widest image made, whatever is asked.
    public static let maximumWidth = 1920

    /// One time of a batch.
    private struct Job {
        var index: Int
        var time: Double
        var option: ThumbnailTimeOption
        var maximumWidth: Int?
        var maximumBytes: Int?
        var generation: Int
        var deliver: @Sendable (Int, Result<Thumbnail, MediaError>) -> Void
    }

    /// The batches' queue, which the worker thread waits on.
    private struct Jobs {
        var pending: [Job] = []
        /// Bumped by `cancelAllRequests`: jobs of an older generation are answered `cancelled`.
        var generation = 0
        var closed = false
        var workerRunning = false
    }

    private let input: MediaInput
    private let interrupt = Interrupt()
    /// The FFmpeg side, made on first use; its `Mutex` serialises the work, which blocks.
    private let reader = Mutex<ThumbnailReader?>(nil)
    private let jobs = Monitor(Jobs())

    /// A thumbnailer for `input`; nothing is opened until the first image is asked for.
    public init(input: MediaInput) {
        self.input = input
    }

    /// A thumbnailer for `source`.
    public convenience init(source: any MediaSource) {
        self.init(input: .source(source))
    }

    deinit { interrupt.raise() }

    /// The image at `seconds` (clamped to the video: past its end, the last frame), at most `maximumWidth` pixels wide
    /// (and never wider than `Thumbnailer.maximumWidth` or the video), keeping the display aspect ratio; when
    /// `maximumBytes` is given, made smaller until its PNG fits. Blocks while it decodes.
    /// - Throws: `MediaError` when the input cannot be read, has no video, or the thumbnailer was closed.
    public func image(
        at seconds: Double, option: ThumbnailTimeOption, maximumWidth: Int? = nil, maximumBytes: Int? = nil
    ) throws(MediaError) -> Thumbnail {
        guard seconds.isFinite else { throw MediaError.other("the time \(seconds) is not a number of seconds") }
        let made = reader.withLock { opened -> Result<Thumbnail, MediaError> in
            do {
                if interrupt.isRaised { throw MediaError.cancelled }
                let reader = try opened ?? ThumbnailReader(input: input, interrupt: interrupt)
                opened = reader
                let (frame, time) = try reader.frame(at: max(seconds, 0), exact: option == .exact)
                var image = try reader.encode(frame, maximumWidth: maximumWidth, maximumBytes: maximumBytes)
                image.requestedTime = seconds
                image.time = time
                return .success(image)
            } catch let error as MediaError {
                return .failure(interrupt.isRaised ? MediaError.cancelled : error)
            } catch {
                return .failure(MediaError.other("\(error)"))
            }
        }
        return try made.get()
    }

    /// Makes the images at `times`, one after the other on the thumbnailer's thread, and calls `result` once per time,
    /// in order, with the time's index in `times` and the image or the error (`MediaError.isCancelled` after
    /// `cancelAllRequests`). Returns at once. Later batches queue behind earlier ones.
    public func requestImages(
        at times: [Double], option: ThumbnailTimeOption, maximumWidth: Int? = nil, maximumBytes: Int? = nil,
        result: @escaping @Sendable (Int, Result<Thumbnail, MediaError>) -> Void
    ) {
        let startWorker = jobs.withLock { jobs -> Bool in
            for (index, time) in times.enumerated() {
                jobs.pending.append(
                    Job(
                        index: index, time: time, option: option, maximumWidth: maximumWidth,
                        maximumBytes: maximumBytes, generation: jobs.closed ? -1 : jobs.generation, deliver: result))
            }
            defer { jobs.workerRunning = true }
            return !jobs.workerRunning
        }
        if startWorker {
            startDetachedThread(name: "CastMedia.thumbnails", stackSize: 4 << 20) { [self] in runWorker() }
        }
    }

    /// Cancels every requested time not answered yet: each is answered with a cancelled error, in order, and an
    /// image being made when this is called is answered cancelled too. Requests made afterwards are served.
    public func cancelAllRequests() {
        jobs.withLock { $0.generation += 1 }
    }

    /// Cancels every request and ends a blocked read; afterwards every request fails with a cancelled error.
    public func close() {
        jobs.withLock { jobs in
            jobs.closed = true
            jobs.generation += 1
        }
        interrupt.raise()
    }

    private func runWorker() {
        while true {
            // An idle worker ends after a while; the next batch starts another.
            let next = jobs.withLock(when: { !$0.pending.isEmpty || $0.closed }, timeout: 5) { jobs -> Job? in
                guard !jobs.pending.isEmpty else {
                    jobs.workerRunning = false
                    return nil
                }
                return jobs.pending.removeFirst()
            }
            guard let job = next else { return }
            var result: Result<Thumbnail, MediaError>
            if isStale(job) {
                result = .failure(.cancelled)
            } else {
                do {
                    result = .success(
                        try image(
                            at: job.time, option: job.option, maximumWidth: job.maximumWidth,
                            maximumBytes: job.maximumBytes))
                } catch {
                    result = .failure(error)
                }
                if isStale(job) { result = .failure(.cancelled) }
            }
            job.deliver(job.index, result)
        }
    }

    private func isStale(_ job: Job) -> Bool {
        jobs.withLock { job.generation != $0.generation || $0.closed }
    }
}

/// The FFmpeg side of a `Thumbnailer`: demuxer, video decoder, scaler and PNG encoder. Used under the
/// thumbnailer's `Mutex` only, one call at a time.
final class ThumbnailReader {
    private let demuxer: Demuxer
    private let stream: UnsafeMutablePointer<AVStream>
    private let decoder: Decoder
    private let timing: StreamTiming
    /// Turns phone videos upright, as `ffmpeg -i` does for the images the tests compare with.
    private let transform: VideoTransform
    private var scaler: OpaquePointer?

    init(input: MediaInput, interrupt: Interrupt) throws {
        demuxer = try Demuxer(input: input, interrupt: interrupt)
        guard let stream = demuxer.bestStream(AVMEDIA_TYPE_VIDEO) else {
            throw MediaError.other("the media has no video to make an image of")
        }
        self.stream = stream
        // Only the video stream is read.
        for i in 0..<Int(demuxer.context.pointee.nb_streams) where i != Int(stream.pointee.index) {
            demuxer.context.pointee.streams[i]?.pointee.discard = AVDISCARD_ALL
        }
        decoder = try Decoder(stream: stream)
        transform = VideoTransform(stream: stream, forDisplay: false, streamName: decoder.streamName)
        timing = StreamTiming(
            timeBase: stream.pointee.time_base, containerStart: demuxer.startTime,
            frameRate: av_guess_frame_rate(demuxer.context, stream, nil))
    }

    deinit { sws_freeContext(scaler) }

    /// The key frame at or before `seconds`, or with `exact` the frame whose interval contains it (the last frame
    /// when it is past the end), and that frame's media time.
    func frame(at seconds: Double, exact: Bool) throws -> (Frame, Double) {
        let base = stream.pointee.time_base
        let target = av_rescale_q(
            demuxer.startTime + Int64(seconds * Double(AV_TIME_BASE)), cast_av_time_base_q(), base)
        let index = stream.pointee.index
        if avformat_seek_file(demuxer.context, index, .min, target, target, 0) < 0 {
            try checkFFmpeg(
                "av_seek_frame", av_seek_frame(demuxer.context, index, target, AVSEEK_FLAG_BACKWARD))
        }
        decoder.flush()
        var chosen: Frame?
        var last: Frame?
        func consider(_ frame: Frame) -> Bool {
            let time = timing.seconds(of: frame) ?? seconds
            if !exact || time + timing.duration(of: frame) > seconds + 1e-6 {
                chosen = frame
                return false
            }
            last = frame
            return true
        }
        while chosen == nil {
            let packet = Packet()
            guard try demuxer.read(into: packet) else {
                _ = decoder.decode(nil, deliver: consider)
                break
            }
            guard packet.pointer.pointee.stream_index == index else { continue }
            _ = decoder.decode(packet, deliver: consider)
        }
        guard let frame = chosen ?? last else { throw MediaError.other("no video frame at or before \(seconds) s") }
        let time = timing.seconds(of: frame) ?? seconds
        var upright: Frame?
        _ = try transform.apply(frame) { turned in
            upright = turned
            return true
        }
        return (upright ?? frame, time)
    }

    /// The frame as PNG: converted (and scaled down to `maximumWidth`, at most `Thumbnailer.maximumWidth`) with
    /// swscale to RGB24, or RGBA when it has alpha; made smaller until it fits `maximumBytes` when given.
    func encode(_ frame: Frame, maximumWidth: Int?, maximumBytes: Int?) throws -> Thumbnail {
        let f = frame.pointer
        let sar = f.pointee.sample_aspect_ratio
        let aspect = sar.num > 0 && sar.den > 0 ? av_q2d(sar) : 1
        let display = (width: Double(f.pointee.width) * aspect, height: Double(f.pointee.height))
        var width = min(
            Int(display.width.rounded()), maximumWidth ?? Thumbnailer.maximumWidth, Thumbnailer.maximumWidth)
        while true {
            width = max(width, 1)
            let height = max(1, Int((Double(width) * display.height / display.width).rounded()))
            let png = try encodePNG(f, width: width, height: height)
            if let maximumBytes, png.count > maximumBytes {
                guard width > 16 else { throw MediaError.other("no image of the frame fits in \(maximumBytes) bytes") }
                width = width * 7 / 10
                continue
            }
            return Thumbnail(requestedTime: 0, time: 0, width: width, height: height, png: png)
        }
    }

    private func encodePNG(_ f: UnsafeMutablePointer<AVFrame>, width: Int, height: Int) throws -> [UInt8] {
        let source = AVPixelFormat(f.pointee.format)
        var alpha = false
        if let descriptor = av_pix_fmt_desc_get(source) {
            alpha = descriptor.pointee.flags & UInt64(AV_PIX_FMT_FLAG_ALPHA) != 0
        }
        let target = alpha ? AV_PIX_FMT_RGBA : AV_PIX_FMT_RGB24
        // Bicubic, as the ffmpeg tool's own conversions.
        scaler = sws_getCachedContext(
            scaler, f.pointee.width, f.pointee.height, source, Int32(width), Int32(height), target, SWS_BICUBIC, nil,
            nil, nil)
        guard let scaler else { throw MediaError.other("sws_getCachedContext: cannot convert this pixel format") }
        let rgb = Frame()
        rgb.pointer.pointee.width = Int32(width)
        rgb.pointer.pointee.height = Int32(height)
        rgb.pointer.pointee.format = target.rawValue
        try checkFFmpeg("av_frame_get_buffer", av_frame_get_buffer(rgb.pointer, 0))
        try checkFFmpeg("sws_scale_frame", sws_scale_frame(scaler, rgb.pointer, f))
        rgb.pointer.pointee.pts = 0

        guard let codec = avcodec_find_encoder(AV_CODEC_ID_PNG) else {
            throw MediaError.ffmpeg("avcodec_find_encoder(png)", status: cast_averror(ENOSYS))
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw MediaError.ffmpeg("avcodec_alloc_context3", status: cast_averror(ENOMEM))
        }
        defer {
            var doomed: UnsafeMutablePointer<AVCodecContext>? = context
            avcodec_free_context(&doomed)
        }
        context.pointee.width = Int32(width)
        context.pointee.height = Int32(height)
        context.pointee.pix_fmt = target
        context.pointee.time_base = AVRational(num: 1, den: 25)
        try checkFFmpeg("avcodec_open2(png)", avcodec_open2(context, codec, nil))
        try checkFFmpeg("avcodec_send_frame", avcodec_send_frame(context, rgb.pointer))
        try checkFFmpeg("avcodec_send_frame", avcodec_send_frame(context, nil))
        guard let packet = av_packet_alloc() else {
            throw MediaError.ffmpeg("av_packet_alloc", status: cast_averror(ENOMEM))
        }
        defer {
            var doomed: UnsafeMutablePointer<AVPacket>? = packet
            av_packet_free(&doomed)
        }
        try checkFFmpeg("avcodec_receive_packet", avcodec_receive_packet(context, packet))
        return Array(UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
    }
}
