import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The helper's standard output, the `MirrorStream`: written by the capture loop (pictures) and the pointer's thread
/// (cursor units), one whole unit at a time.
///
/// Thread-safety: every write holds the mutex.
final class StreamOutput: Sendable {
    private let lock = Mutex(())

    /// Writes `bytes` whole; false when `cast` is gone (the pipe closed).
    func write(_ bytes: [UInt8]) -> Bool {
        lock.withLock { _ in bytes.withUnsafeBytes(Self.writeAll) }
    }

    private static func writeAll(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(1, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            done += n
        }
        return true
    }
}
