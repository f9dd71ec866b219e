import CastBase
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The mirror stream of one helper copied to several receivers (`cast mirror` with several `--to`): a thread reads the
/// helper's pipe and writes each piece to one pipe per receiver, whose read ends `RemotePlayback` serves. One capture
/// and one encode for all; each receiver shows the pictures as they reach it (not in step).
///
/// The branches are pipes of the default size, written without blocking: a receiver that is slower than the others
/// holds the copy back (the stream cannot skip a picture for one receiver only: the pictures after it refer to it),
/// the helper's pipe fills, and the helper's rate control brings the bit rate down to what the slowest link carries.
/// A receiver that left (`drop`, or its pipe closed) is no longer written to, so it never holds back the others.
///
/// Thread-safety: the descriptors are immutable after init and used by the copying thread only (which closes them
/// when the source ends); `dropped` is under a mutex.
final class MirrorFanOut: Sendable {
    /// The read end of each branch, in the order of the receivers.
    let branches: [Int32]
    private let writers: [Int32]
    private let dropped = Mutex<Set<Int>>([])

    /// Copies `source` (taken over: closed when its copy ends) to `count` branches.
    init?(source: Int32, count: Int) {
        var reads: [Int32] = []
        var writes: [Int32] = []
        for _ in 0..<count {
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else {
                for fd in reads + writes { close(fd) }
                return nil
            }
            for fd in ends { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
            reads.append(ends[0])
            writes.append(ends[1])
        }
        branches = reads
        writers = writes
        startDetachedThread(name: "cast mirror copy") { [self] in
            copy(from: source)
            close(source)
        }
    }

    /// Stops writing to the branch `index` (its receiver left).
    func drop(_ index: Int) { _ = dropped.withLock { $0.insert(index) } }

    private func copy(from source: Int32) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer {
            buffer.deallocate()
            for fd in writers { close(fd) }
        }
        while true {
            let count = read(source, buffer.baseAddress, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            var done = [Int](repeating: 0, count: writers.count)
            // Each branch gets the whole piece before the next is read: a slow branch holds the copy back.
            while true {
                let skipped = dropped.withLock { $0 }
                let pending = writers.indices.filter { !skipped.contains($0) && done[$0] < count }
                guard !pending.isEmpty else { break }
                for index in pending {
                    let n = write(writers[index], buffer.baseAddress! + done[index], count - done[index])
                    if n > 0 {
                        done[index] += n
                    } else if n < 0 && errno != EAGAIN && errno != EINTR {
                        drop(index)  // EPIPE: the receiver's side is gone.
                    }
                }
                let waiting = pending.filter { done[$0] < count && !skipped.contains($0) }
                guard !waiting.isEmpty else { continue }
                var descriptors = waiting.map { pollfd(fd: writers[$0], events: Int16(POLLOUT), revents: 0) }
                // A bound on the wait: a branch dropped meanwhile is seen within it.
                _ = poll(&descriptors, nfds_t(descriptors.count), 100)
            }
        }
    }
}
