internal import CFFmpeg
import CastBase
public import CastProtocol
import Foundation
import Synchronization

/// Plays a `mirror` session: reads the sender's screen as `MirrorStream` units from `source`, decodes each access unit
/// as it arrives (H.264 with `AV_CODEC_FLAG_LOW_DELAY`: no reordering delay) and shows each picture at once in the
/// window, with no clock, queue or read-ahead between the network and the screen. It ends when the stream ends
/// (the sender stopped: `playbackEnded`), on `stop` (`userExited`), or on a broken stream (`playbackError`); the
/// window goes back to the idle screen then.
///
/// Thread-safety: one thread (`castd.mirror`) reads, decodes and presents; `perform` comes from any thread and only
/// touches `stopping` (atomic) and the source's `cancel`. Events leave in order on one serial queue.
public final class MirrorPlayer: PlaybackDriver, Sendable {
    private let source: any MediaSource
    private let configuration: PlayerConfiguration
    private let onEvent: @Sendable (PlaybackEvent) -> Void
    private let events = DispatchQueue(label: "castd.mirror.events")
    private let stopping = Atomic<Bool>(false)
    private let level = Mutex((volume: 1.0, muted: false))

    /// A player of the mirror stream `source`, showing it as `configuration.video` says (a window, full screen, or
    /// nothing: decoded only).
    public init(
        source: any MediaSource, configuration: PlayerConfiguration,
        onEvent: @escaping @Sendable (PlaybackEvent) -> Void
    ) {
        self.source = source
        self.configuration = configuration
        self.onEvent = onEvent
    }

    public func start() {
        // The engine's stack: FFmpeg's decoders need more than a small thread stack gives.
        startDetachedThread(name: "castd.mirror", stackSize: 4 << 20) { [self] in run() }
    }

    public func perform(_ action: CastProtocol.PlaybackControl.Action) {
        switch action {
        case .stop:
            stopping.store(true, ordering: .sequentiallyConsistent)
            source.cancel()
        case .volume(let volume):
            let now = level.withLock { level in
                level.volume = volume
                return level
            }
            emit(.volume(now.volume, muted: now.muted))
        case .mute(let muted):
            let now = level.withLock { level in
                level.muted = muted
                return level
            }
            emit(.volume(now.volume, muted: now.muted))
        case .accessLog:
            break
        // Live: nothing to pause, seek, slow down or choose.
        default:
            break
        }
    }

    private func emit(_ event: PlaybackEvent) {
        events.async { [onEvent] in onEvent(event) }
    }

    private func run() {
        let outcome: (reason: FinishReason, error: String?)
        do {
            let ended = try play()
            outcome =
                ended || !stopping.load(ordering: .sequentiallyConsistent) ? (.playbackEnded, nil) : (.userExited, nil)
        } catch {
            if stopping.load(ordering: .sequentiallyConsistent) {
                outcome = (.userExited, nil)
            } else {
                outcome = (.playbackError, "\(error)")
            }
        }
        emit(.playbackState(.stopped))
        emit(.finished(reason: outcome.reason, error: outcome.error))
    }

    /// Reads, decodes and shows until the stream ends (true) or `stop` (false). Throws on a broken stream or a
    /// decoder failure.
    private func play() throws -> Bool {
        let decoder = try MirrorDecoder()
        let presenter = try makePresenter()
        defer { presenter?.close() }
        // The sender's sound, when it sends any (`cast mirror --audio`): opened with its first unit.
        var sound: MirrorSoundOutput?
        defer { sound?.close() }
        var soundDecoder = MirrorSoundUnits()
        var reader = MirrorStream.Reader()
        // A whole intra picture in one read where the sender's pipe has it (a read is at most 1 MiB).
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: MediaRead.maximumLength, alignment: 16)
        defer { buffer.deallocate() }
        var shown = 0
        var lastSize = (0, 0)
        var first: UInt64?
        var lastPosition: UInt64 = 0
        while !stopping.load(ordering: .sequentiallyConsistent) {
            let count = try source.read(into: buffer)
            if count == 0 { return !stopping.load(ordering: .sequentiallyConsistent) }
            reader.append(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            while let unit = try reader.next() {
                if MirrorCursor.isCursor(unit.payload) {
                    // The pointer, beside the pictures; a damaged one is skipped as a damaged picture is.
                    if let cursor = try? MirrorCursor(decoding: unit.payload) { presenter?.showCursor(cursor) }
                    sound?.arrived(captured: unit.captured)
                    continue
                }
                if MirrorSound.isSound(unit.payload) {
                    // A malformed or damaged piece of sound is skipped as a damaged picture is.
                    guard case .alsa(let name) = configuration.audio,
                        let piece = try? soundDecoder.piece(of: unit.payload)
                    else { continue }
                    if sound == nil {
                        sound = MirrorSoundOutput(
                            deviceName: name, clock: configuration.audioClock, log: configuration.log)
                        configuration.log("mirror: sound in \(soundDecoder.format)")
                        // Before the first picture, its announcement says both.
                        if shown > 0 { emit(.mediaTypes([.video, .audio])) }
                    }
                    sound?.play(piece, captured: unit.captured)
                    continue
                }
                for frame in try decoder.decode(unit.payload) {
                    try presenter?.present(frame)
                    sound?.shown(captured: unit.captured)
                    let size = (Int(frame.pointer.pointee.width), Int(frame.pointer.pointee.height))
                    if shown == 0 {
                        announce(frame, sound: sound != nil)
                    } else if size != lastSize {
                        // The sender's screen or window changed size: the stream follows, and says so.
                        emit(.naturalSize(width: size.0, height: size.1))
                    }
                    lastSize = size
                    shown += 1
                }
                let start = first ?? unit.captured
                first = start
                // The position is the stream's age by its capture times, five times a second as the engine's: it
                // shows the session lives (castd renews the worker's CPU budget on positions that move).
                if unit.captured >= lastPosition + 200_000 {
                    lastPosition = unit.captured
                    emit(.position(seconds: Double(unit.captured - start) / 1e6, at: Date().timeIntervalSince1970))
                }
            }
        }
        return false
    }

    /// The first picture's events, as the engine sends them for a video.
    private func announce(_ frame: Frame, sound: Bool) {
        emit(.mediaTypes(sound ? [.video, .audio] : [.video]))
        emit(.naturalSize(width: Int(frame.pointer.pointee.width), height: Int(frame.pointer.pointee.height)))
        emit(.readyForDisplay)
        emit(.videoActive(true))
        emit(.playbackState(.playing))
    }

    private func makePresenter() throws -> (any VideoPresenter)? {
        let name = "the mirrored screen"
        switch configuration.video {
        case .none, .framemd5: return nil
        case .window: return try WindowPresenter(mode: .windowed, scaling: configuration.scalingMode, streamName: name)
        case .fullscreen:
            return try WindowPresenter(mode: .fullscreen, scaling: configuration.scalingMode, streamName: name)
        case .hosted(let view):
            return try WindowPresenter(mode: .hosted(view), scaling: configuration.scalingMode, streamName: name)
        }
    }
}

/// An H.264 decoder set for the least delay: every access unit in, its picture out at once.
///
/// Thread-safety: used by the mirror thread only.
final class MirrorDecoder {
    private let context: UnsafeMutablePointer<AVCodecContext>
    private let packet = Packet()

    /// Test only (`CAST_TEST_NO_H264=1`): this castd acts as one whose FFmpeg has no H.264 decoder, so that the
    /// sender's error can be seen without such a build.
    static let lacksDecoderForTests = ProcessInfo.processInfo.environment["CAST_TEST_NO_H264"] == "1"

    init() throws {
        guard !Self.lacksDecoderForTests, let codec = avcodec_find_decoder(AV_CODEC_ID_H264) else {
            throw MediaError.other("this receiver's FFmpeg has no H.264 decoder: it cannot show a mirrored screen")
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw MediaError.ffmpeg("avcodec_alloc_context3", status: cast_averror(ENOMEM))
        }
        self.context = context
        context.pointee.flags |= Int32(AV_CODEC_FLAG_LOW_DELAY)
        // Slice threads only: frame threads hold a picture back per thread.
        context.pointee.thread_type = FF_THREAD_SLICE
        context.pointee.thread_count = 2
        context.pointee.max_pixels = Decoder.maximumPixels
        _ = try checkFFmpeg("avcodec_open2 (H.264)", avcodec_open2(context, codec, nil))
    }

    deinit {
        var context: UnsafeMutablePointer<AVCodecContext>? = self.context
        avcodec_free_context(&context)
    }

    /// The pictures of one access unit (usually one; none while the decoder waits for a key or recovery point).
    func decode(_ unit: [UInt8]) throws -> [Frame] {
        let packet = packet.pointer
        _ = try checkFFmpeg("av_new_packet", av_new_packet(packet, Int32(unit.count)))
        defer { av_packet_unref(packet) }
        unit.withUnsafeBytes { bytes in
            packet.pointee.data.update(from: bytes.bindMemory(to: UInt8.self).baseAddress!, count: unit.count)
        }
        let sent = avcodec_send_packet(context, packet)
        // A damaged unit is skipped, as ffplay does: the next intra refresh repairs the picture.
        if sent < 0 && sent != cast_averror(EAGAIN) { return [] }
        var frames: [Frame] = []
        while true {
            let frame = Frame()
            let status = avcodec_receive_frame(context, frame.pointer)
            if status == cast_averror(EAGAIN) || status == cast_averror_eof() { break }
            _ = try checkFFmpeg("avcodec_receive_frame (H.264)", status)
            frames.append(frame)
        }
        return frames
    }
}
