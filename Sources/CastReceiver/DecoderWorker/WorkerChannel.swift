import CastProtocol
import Foundation
import Glibc

/// One end of the channel between castd and a decoder worker: a Unix stream socket carrying `WorkerMessage`
/// frames, bounded by the receiving side's `FrameDecoder`.
///
/// Thread-safety: `send` may be called from any thread (one frame at a time, under `sendLock`); `receive` by one
/// thread only (the end's reader); `shutdown` from any thread. The descriptor is closed in deinit, once nothing
/// can use it.
final class WorkerChannel: @unchecked Sendable {
    // Invariant: `decoder` and `chunk` are touched only by the single reader thread; writes happen only under
    // `sendLock`; `fd` never changes.
    let fd: Int32
    private let sendLock = NSLock()
    private var decoder: FrameDecoder
    /// Where `receive` reads into; the reader's alone, like `decoder`.
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    private let decode: @Sendable (Frame) throws(ProtocolError) -> WorkerMessage

    /// Takes ownership of `fd`. `incoming` bounds the frames this end accepts; `decode` judges them.
    init(
        fd: Int32, incoming maximumFrameLength: Int,
        decode: @escaping @Sendable (Frame) throws(ProtocolError) -> WorkerMessage
    ) {
        self.fd = fd
        self.decoder = FrameDecoder(maximumFrameLength: maximumFrameLength)
        self.decode = decode
    }

    /// False once `releaseDescriptor` gave the descriptor away; touched only by the reader thread, before the channel
    /// is shared.
    private var ownsDescriptor = true

    deinit { if ownsDescriptor { _ = Glibc.close(fd) } }

    /// Gives the descriptor to the caller, who makes a channel of its own of it (another decoder for another stage),
    /// or nil when bytes of a next frame are already read: they would be lost. Only while one thread uses the channel.
    func releaseDescriptor() -> Int32? {
        guard !decoder.hasPartialFrame else { return nil }
        ownsDescriptor = false
        return fd
    }

    /// A connected pair of descriptors, both close-on-exec.
    static func socketPair() throws -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        let status = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0, &fds)
        guard status == 0 else { throw WorkerFailure("socketpair: \(String(cString: strerror(errno)))") }
        return (fds[0], fds[1])
    }

    /// A write that makes no progress for this long fails (the peer stopped reading).
    func setSendTimeout(seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// A receive that waits this long for bytes returns nil (the peer is treated as gone); 0 waits for ever.
    func setReceiveTimeout(seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Writes one message whole.
    func send(_ message: WorkerMessage) throws {
        let bytes = message.encoded()
        try sendLock.withLock { try bytes.withUnsafeBytes { try write($0) } }
    }

    /// Writes `.data(MediaData(offset:bytes:))` whole, the bytes straight from the caller's memory: the same frame as
    /// `send`, without building it in a fresh megabyte first.
    func sendData(offset: Int64, bytes: UnsafeRawBufferPointer) throws {
        // Frame.encoded's layout: the length of type + payload (big-endian), the type, then mediaData's payload.
        var header = withUnsafeBytes(of: UInt32(1 + 8 + bytes.count).bigEndian) { Array($0) }
        header.append(WorkerMessage.Kind.data.rawValue)
        header += withUnsafeBytes(of: UInt64(bitPattern: offset).bigEndian) { Array($0) }
        try sendLock.withLock {
            try header.withUnsafeBytes { try write($0) }
            try write(bytes)
        }
    }

    /// Sends all of `bytes`; called under `sendLock`.
    private func write(_ bytes: UnsafeRawBufferPointer) throws {
        var written = 0
        while written < bytes.count {
            let count = Glibc.send(fd, bytes.baseAddress! + written, bytes.count - written, Int32(MSG_NOSIGNAL))
            if count < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK {
                    throw WorkerFailure("the channel is full: the peer stopped reading")
                }
                throw WorkerFailure("send: \(String(cString: strerror(code)))")
            }
            written += count
        }
    }

    /// The next message; nil when the peer closed the channel. Throws when the peer broke the channel's rules.
    func receive() throws -> WorkerMessage? {
        try receive(onData: nil)
    }

    /// `receive()`, except that the bytes of each `data` message go to `onData` (its offset, and a view of the bytes
    /// valid only inside it) instead of into a message of their own, and `receive` goes on to the next message.
    func receive(onData: ((Int64, UnsafeRawBufferPointer) -> Void)?) throws -> WorkerMessage? {
        while true {
            let next = try decoder.nextFrame { type, payload throws -> WorkerMessage? in
                if let onData, type == WorkerMessage.Kind.data.rawValue, payload.count >= 8 {
                    // The frame's limit (`incoming`) already bounds the bytes to the longest read.
                    onData(Int64(bigEndian: payload.loadUnaligned(as: Int64.self)), UnsafeRawBufferPointer(rebasing: payload[8...]))
                    return nil
                }
                return try decode(Frame(type: type, payload: Array(payload)))
            }
            if let next {
                guard let message = next else { continue }
                return message
            }
            let count = chunk.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { return nil }
            decoder.feed(chunk[0..<count])
        }
    }

    /// Ends both directions: a reader blocked in `receive` returns nil, and so does the peer's.
    func shutdown() { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
}

/// A failure of the worker or its channel, with a message for the logs and the sender.
struct WorkerFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
