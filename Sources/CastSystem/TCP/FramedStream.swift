public import CastProtocol
import Glibc
import Synchronization

/// Frames (`Frame`) over a connected stream socket: a TCP connection in the clear, or a socket pair between two
/// processes. Every frame read is bounded by the limit given at creation; every read and write by a deadline.
///
/// Thread-safety: one thread receives at a time (the decoder is its alone); `send` may be called from any thread
/// (whole frames, under a lock); `shutdown` from any thread wakes a receiver.
public final class FramedStream: Sendable {
    private let stream: TCPStream
    /// The receiver's: taken only between reads, never across one, so it costs an uncontended lock per frame.
    private let decoder: Mutex<FrameDecoder>
    /// Writes go through it, so frames from two threads never interleave.
    private let writeLock = Mutex(())

    /// Takes ownership of `fd`; frames longer than `maximumFrameLength` are refused.
    public init(fd: Int32, maximumFrameLength: Int) {
        stream = TCPStream(fd: fd)
        decoder = Mutex(FrameDecoder(maximumFrameLength: maximumFrameLength))
    }

    deinit { stream.close() }

    /// Sends one frame whole.
    /// - Throws: `SecurityError` `.timedOut` when the peer stops reading for `timeout`, `.system` when it is gone.
    public func send(_ frame: Frame, timeout: Duration) throws {
        try writeLock.withLock { _ in try stream.write(frame.encoded(), timeout: timeout) }
    }

    /// The next frame, or nil at the end of the stream between two frames.
    /// - Throws: `SecurityError` `.timedOut` when no whole frame arrives within `timeout` (nil: wait forever),
    ///   `ProtocolError` for a frame over the limit or a stream that ends inside a frame.
    public func receive(timeout: Duration?) throws -> Frame? {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        while true {
            if let frame = try decoder.withLock({ try $0.nextFrame() }) { return frame }
            let remaining = deadline.map { max($0 - ContinuousClock.now, .zero) }
            let bytes = try stream.read(maxCount: 64 * 1024, timeout: remaining)
            if bytes.isEmpty {
                guard !decoder.withLock({ $0.hasPartialFrame }) else {
                    throw ProtocolError(.malformedMessage, "the stream ended inside a frame")
                }
                return nil
            }
            decoder.withLock { $0.feed(bytes) }
        }
    }

    /// Shuts both directions down: the peer sees the end, and a thread waiting in `receive` returns. Any thread.
    public func shutdown() {
        stream.shutdown()
    }
}
