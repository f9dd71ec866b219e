import CastProtocol
import Foundation
import Glibc
import Synchronization

/// One end of the channel between castd and a decoder worker: a Unix stream socket carrying `WorkerMessage`
/// frames, bounded by the receiving side's `FrameDecoder`.
///
/// Thread-safety: `send` may be called from any thread (one frame at a time, under `sendLock`); `receive` by one
/// thread only (the end's reader); `shutdown` from any thread. The descriptor is closed in deinit, once nothing
/// can use it.
final class WorkerChannel: Sendable {
    /// Never changes.
    let fd: Int32
    private let sendLock = Mutex(())
    /// The reader's state. Only the reader takes the lock (uncontended), and never across a `recv`.
    private let reading: Mutex<Reading>
    private let decode: @Sendable (Frame) throws(ProtocolError) -> WorkerMessage

    private struct Reading {
        var decoder: FrameDecoder
        /// False once `releaseDescriptor` gave the descriptor away.
        var ownsDescriptor = true
    }

    /// Takes ownership of `fd`. `incoming` bounds the frames this end accepts; `decode` judges them.
    init(
        fd: Int32, incoming maximumFrameLength: Int,
        decode: @escaping @Sendable (Frame) throws(ProtocolError) -> WorkerMessage
    ) {
        self.fd = fd
        self.reading = Mutex(Reading(decoder: FrameDecoder(maximumFrameLength: maximumFrameLength)))
        self.decode = decode
    }

    deinit { if reading.withLock({ $0.ownsDescriptor }) { _ = Glibc.close(fd) } }

    /// Gives the descriptor to the caller, who makes a channel of its own of it (another decoder for another stage),
    /// or nil when bytes of a next frame are already read: they would be lost. Only while one thread uses the channel.
    func releaseDescriptor() -> Int32? {
        reading.withLock { reading in
            guard !reading.decoder.hasPartialFrame else { return nil }
            reading.ownsDescriptor = false
            return fd
        }
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
        try sendLock.withLock { _ in try bytes.withUnsafeBytes { try write($0) } }
    }

    /// Writes `.data(MediaData(offset:bytes:))` whole, the bytes straight from the caller's memory: the same frame as
    /// `send`, without building it in a fresh megabyte first.
    func sendData(offset: Int64, bytes: UnsafeRawBufferPointer) throws {
        // Frame.encoded's layout: the length of type + payload (big-endian), the type, then mediaData's payload.
        var header = withUnsafeBytes(of: UInt32(1 + 8 + bytes.count).bigEndian) { Array($0) }
        header.append(WorkerMessage.Kind.data.rawValue)
        header += withUnsafeBytes(of: UInt64(bitPattern: offset).bigEndian) { Array($0) }
        try sendLock.withLock { _ in
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
        try receive(dataInto: nil)
    }

    /// The next message for a reader loop: nil when the peer closed the channel, or broke its rules (then `violation`
    /// says how).
    func next(violation: inout String?) -> WorkerMessage? {
        do {
            return try receive()
        } catch {
            violation = "\(error)"
            return nil
        }
    }

    /// `receive()`, except that the bytes of each `data` message are received straight into the memory `sink` gives
    /// for them (told the message's offset and length before a byte of it is copied), and `receive` goes on to the
    /// next message: no copy through the frame decoder's buffer for megabytes of media.
    func receive(dataInto sink: (any WorkerDataSink)?) throws -> WorkerMessage? {
        while true {
            switch try receivePiece(dataInto: sink) {
            case .data: continue
            case .message(let message): return message
            case .closed: return nil
            }
        }
    }

    /// What `receivePiece` received.
    enum Piece {
        /// A `data` message's `count` bytes at `offset`, in the memory the sink gave for them.
        case data(offset: Int64, count: Int)
        /// Another message (or `data` when there is no sink).
        case message(WorkerMessage)
        /// The peer closed the channel.
        case closed
    }

    /// The next message, the bytes of a `data` message received into the memory `sink` gives for them: one message,
    /// so that a reader that waits for data (a pushed stream's) gets each piece the moment it is complete.
    func receivePiece(dataInto sink: (any WorkerDataSink)?) throws -> Piece {
        while true {
            if let sink, let (offset, count) = try nextDataStart() {
                // The frame's limit (`incoming`) already bounds the bytes to the longest read.
                _ = reading.withLock { $0.decoder.take(Frame.headerSize + 1 + 8, into: nil) }
                let target = try sink.destination(offset: offset, count: count)
                var filled = reading.withLock { $0.decoder.take(count, into: target) }
                while filled < count {
                    let got = Glibc.recv(fd, target.baseAddress! + filled, count - filled, 0)
                    if got < 0 && errno == EINTR { continue }
                    guard got > 0 else {
                        sink.received(complete: false)
                        return .closed
                    }
                    filled += got
                }
                sink.received(complete: true)
                return .data(offset: offset, count: count)
            }
            let next = try reading.withLock { reading in
                try reading.decoder.nextFrame { type, payload in try decode(Frame(type: type, payload: Array(payload)))
                }
            }
            if let next {
                return .message(next)
            }
            guard try fill() else { return .closed }
        }
    }

    /// The offset and byte count of the `data` message that comes next, once its header and offset are buffered.
    private func nextDataStart() throws -> (Int64, Int)? {
        let start = try reading.withLock { reading in
            try reading.decoder.peekFrameStart(prefix: 8) { type, length, prefix -> (Int64, Int)? in
                guard type == WorkerMessage.Kind.data.rawValue, length >= 1 + 8 else { return nil }
                return (Int64(bigEndian: prefix.loadUnaligned(as: Int64.self)), length - 1 - 8)
            }
        }
        return start ?? nil
    }

    /// Reads what the socket has (at most 64 KiB, into fresh memory that is not zeroed first) into the decoder; false
    /// when the peer closed the channel (or it failed).
    private func fill() throws -> Bool {
        while true {
            var failure: Int32 = 0
            let bytes = [UInt8](unsafeUninitializedCapacity: 64 * 1024) { buffer, count in
                let got = Glibc.recv(fd, buffer.baseAddress, buffer.count, 0)
                failure = got < 0 ? errno : 0
                count = max(got, 0)
            }
            if failure == EINTR { continue }
            if bytes.isEmpty { return false }
            reading.withLock { $0.decoder.feed(bytes) }
            return true
        }
    }

    /// Ends both directions: a reader blocked in `receive` returns nil, and so does the peer's.
    func shutdown() { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
}

/// Where a channel's reader puts the bytes of `data` messages (`WorkerChannel.receive(dataInto:)`).
///
/// Thread-safety: called by the channel's one reader thread; an implementation shares its state with other threads
/// under its own lock.
protocol WorkerDataSink: AnyObject {
    /// Memory for exactly `count` bytes of the answer at `offset`, which nothing else touches until `received`.
    /// - Throws: when the answer breaks the order of reads; the channel is then broken.
    func destination(offset: Int64, count: Int) throws -> UnsafeMutableRawBufferPointer
    /// The bytes are all there (`complete`), or the channel closed first; called once after each `destination`.
    func received(complete: Bool)
}

/// A failure of the worker or its channel, with a message for the logs and the sender.
struct WorkerFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
