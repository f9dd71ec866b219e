internal import CFFmpeg
import Foundation

/// An AVIOContext whose read and seek callbacks call a `MediaSource`.
///
/// Only the demux thread uses it (FFmpeg calls the callbacks from inside the demuxer); the interrupt may be
/// raised from anywhere.
final class SourceIO {
    /// The buffer FFmpeg reads through: 64 KiB, so a network source sees large reads.
    static let bufferSize = 64 * 1024

    let context: UnsafeMutablePointer<AVIOContext>
    private let bridge: Unmanaged<Bridge>

    /// What the C callbacks reach through `opaque`.
    final class Bridge {
        let source: any MediaSource
        let interrupt: Interrupt
        /// The byte position of the source, for SEEK_CUR.
        var position: Int64 = 0
        /// The first failure of the source, reported instead of FFmpeg's generic I/O error.
        var failure: (any Error)?

        init(source: any MediaSource, interrupt: Interrupt) {
            self.source = source
            self.interrupt = interrupt
        }
    }

    init(source: any MediaSource, interrupt: Interrupt) throws {
        guard let buffer = av_malloc(Self.bufferSize) else {
            throw MediaError.ffmpeg("av_malloc", status: cast_averror(ENOMEM))
        }
        let bridge = Unmanaged.passRetained(Bridge(source: source, interrupt: interrupt))
        let seek: (@convention(c) (UnsafeMutableRawPointer?, Int64, Int32) -> Int64)? =
            source.isSeekable ? sourceSeek : nil
        guard
            let context = avio_alloc_context(
                buffer.assumingMemoryBound(to: UInt8.self), Int32(Self.bufferSize), 0, bridge.toOpaque(),
                sourceRead, nil, seek)
        else {
            av_free(buffer)
            bridge.release()
            throw MediaError.ffmpeg("avio_alloc_context", status: cast_averror(ENOMEM))
        }
        context.pointee.seekable = source.isSeekable ? AVIO_SEEKABLE_NORMAL : 0
        self.context = context
        self.bridge = bridge
    }

    /// The source's own failure, when a read or seek threw.
    var sourceFailure: (any Error)? { bridge.takeUnretainedValue().failure }

    deinit {
        // FFmpeg may have replaced the buffer; free whatever it holds now.
        av_freep(&context.pointee.buffer)
        var pointer: UnsafeMutablePointer<AVIOContext>? = context
        avio_context_free(&pointer)
        bridge.release()
    }
}

private func sourceRead(_ opaque: UnsafeMutableRawPointer?, _ buffer: UnsafeMutablePointer<UInt8>?, _ size: Int32)
    -> Int32
{
    guard let opaque, let buffer else { return cast_averror(EINVAL) }
    let bridge = Unmanaged<SourceIO.Bridge>.fromOpaque(opaque).takeUnretainedValue()
    if bridge.interrupt.isRaised { return cast_averror_exit() }
    do {
        let count = try bridge.source.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: Int(size)))
        if bridge.interrupt.isRaised { return cast_averror_exit() }
        if count <= 0 { return cast_averror_eof() }
        bridge.position += Int64(count)
        return Int32(count)
    } catch {
        if bridge.interrupt.isRaised { return cast_averror_exit() }
        bridge.failure = bridge.failure ?? error
        return cast_averror(EIO)
    }
}

private func sourceSeek(_ opaque: UnsafeMutableRawPointer?, _ offset: Int64, _ whence: Int32) -> Int64 {
    guard let opaque else { return Int64(cast_averror(EINVAL)) }
    let bridge = Unmanaged<SourceIO.Bridge>.fromOpaque(opaque).takeUnretainedValue()
    let whence = whence & ~Int32(AVSEEK_FORCE)
    if whence == AVSEEK_SIZE { return bridge.source.size ?? -1 }
    if bridge.interrupt.isRaised { return Int64(cast_averror_exit()) }
    let target: Int64
    switch whence {
    case SEEK_SET: target = offset
    case SEEK_CUR: target = bridge.position + offset
    case SEEK_END:
        guard let size = bridge.source.size else { return Int64(cast_averror(ENOSYS)) }
        target = size + offset
    default: return Int64(cast_averror(EINVAL))
    }
    do {
        try bridge.source.seek(to: target)
        bridge.position = target
        return target
    } catch {
        bridge.failure = bridge.failure ?? error
        return Int64(cast_averror(EIO))
    }
}
