import Glibc
import Synchronization

/// A plain (unencrypted) TCP connection with bounded reads and writes: the transport of the AirPlay video
/// server, whose clients speak HTTP in the clear.
///
/// Thread-safety: one thread reads and writes (the connection's own); ``shutdown()`` may be called from any
/// thread to wake it (the read then returns end-of-file). ``close()`` is for the owning thread, after its last
/// read or write.
public final class TCPStream: Sendable {
    /// The descriptor, owned by this stream.
    public let fd: Int32
    private let isClosed = Mutex(false)

    /// Takes ownership of a connected descriptor (from ``TCP/accept(_:)``).
    public init(fd: Int32) {
        self.fd = fd
    }

    /// Up to `maxCount` bytes; empty at end-of-file (or after ``shutdown()``).
    /// - Throws: `SecurityError` `.timedOut` when nothing arrives within `timeout` (nil: wait forever),
    ///   `.system` on a failed read (a reset connection).
    public func read(maxCount: Int, timeout: Duration?) throws -> [UInt8] {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        var buffer = [UInt8](repeating: 0, count: maxCount)
        while true {
            try waitUntilReady(fd, events: Int16(POLLIN), deadline: deadline, limit: timeout, operation: "a read")
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, maxCount, Int32(MSG_DONTWAIT)) }
            if count >= 0 { return Array(buffer.prefix(count)) }
            let code = errno
            if code == EINTR || code == EAGAIN || code == EWOULDBLOCK { continue }
            throw SecurityError(.system, function: "recv", errno: code, "the connection failed")
        }
    }

    /// Writes all of `bytes`, or throws `.timedOut` when the peer stops reading for `timeout`.
    public func write(_ bytes: [UInt8], timeout: Duration) throws {
        let deadline = ContinuousClock.now + timeout
        var offset = 0
        while offset < bytes.count {
            try waitUntilReady(fd, events: Int16(POLLOUT), deadline: deadline, limit: timeout, operation: "a write")
            let count = bytes.withUnsafeBytes {
                send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
            }
            if count >= 0 {
                offset += count
                continue
            }
            let code = errno
            if code == EINTR || code == EAGAIN || code == EWOULDBLOCK { continue }
            throw SecurityError(.system, function: "send", errno: code, "the connection failed")
        }
    }

    /// Shuts both directions down, waking a thread blocked in ``read(maxCount:timeout:)``. Any thread; idempotent.
    public func shutdown() {
        isClosed.withLock { closed in
            if !closed { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    /// Closes the descriptor, once. The owning thread only, after its last read or write.
    public func close() {
        isClosed.withLock { closed in
            guard !closed else { return }
            closed = true
            closeDescriptor(fd)
        }
    }
}
