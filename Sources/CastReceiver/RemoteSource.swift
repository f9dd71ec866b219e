import CastMedia
import CastProtocol
import CastSecurity
import Foundation

/// The media a sender serves, read over its media connection: each read asks for a byte range
/// (`mediaRead`) and waits for the bytes (`mediaData`). Seeking moves the offset of the next read.
///
/// Several readers may share one media connection (`anotherReader()`: the thumbnailer reads the
/// media while the engine plays it), each with its own position; their request/answer pairs take
/// turns on the connection.
///
/// Thread-safety: `read` and `seek` of one reader are called by one thread at a time (the
/// engine's reader); the connection is used by one read at a time (the channel's lock); `cancel`
/// may come from any thread: the first reader's shuts the socket down, which TLSConnection allows.
final class RemoteSource: MediaSource, @unchecked Sendable {
    private let channel: Channel
    private let descriptor: MediaDescriptor
    private var position: Int64 = 0
    /// Whether cancelling this reader ends the connection (the engine's reader) or only this reader.
    private let ownsConnection: Bool
    /// Which served file it reads (`MediaRead.resource`): the media, or the play request's subtitle file.
    private let resource: Int
    private let cancelled = NSLock()
    private var isCancelledFlag = false

    /// How long the sender may take to answer one read before the media counts as lost.
    static let replyTimeout: Duration = .seconds(15)

    init(tls: TLSConnection, descriptor: MediaDescriptor) {
        self.channel = Channel(tls: tls, descriptor: descriptor)
        self.descriptor = descriptor
        self.ownsConnection = true
        self.resource = MediaRead.media
    }

    private init(channel: Channel, descriptor: MediaDescriptor, resource: Int = MediaRead.media) {
        self.channel = channel
        self.descriptor = descriptor
        self.ownsConnection = false
        self.resource = resource
    }

    /// A reader of the play request's subtitle file over the same connection, from offset 0.
    func subtitleReader(_ file: SubtitleFile) -> RemoteSource {
        RemoteSource(
            channel: channel, descriptor: MediaDescriptor(size: file.size, seekable: true, nameHint: file.nameHint),
            resource: MediaRead.subtitles)
    }

    /// A reader of the same media over the same connection, from offset 0; cancelling it leaves the connection open.
    func anotherReader() -> RemoteSource { RemoteSource(channel: channel, descriptor: descriptor) }

    var size: Int64? { descriptor.size }
    var isSeekable: Bool { descriptor.seekable }
    var nameHint: String? { descriptor.nameHint }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if cancelled.withLock({ isCancelledFlag }) { throw MediaLost("the read was cancelled") }
        let count = try channel.read(at: position, resource: resource, into: buffer)
        position += Int64(count)
        return count
    }

    func seek(to offset: Int64) throws {
        guard descriptor.seekable else { throw MediaLost("the media is a stream and cannot seek") }
        position = offset
    }

    func cancel() {
        if ownsConnection {
            channel.tls.shutdown()
        } else {
            cancelled.withLock { isCancelledFlag = true }
        }
    }

    /// Ends the media connection (the session is over).
    func close() { channel.tls.close() }

    /// The connection and its frame decoder, shared by the readers: one reader at a time asks and waits. For media
    /// that can seek (a file), a reader that reads on from where it stopped finds the next range asked for already:
    /// each answered read sends the next one (`readsAhead` in flight), so the sender's reading and sending overlap
    /// castd's receiving instead of waiting for a round trip per read. The sender answers reads in the order they
    /// were sent (docs/protocol.md), so answers are matched against `inFlight` in order.
    private final class Channel: @unchecked Sendable {
        // Invariant: `decoder`, `received`, `inFlight`, `arrived`, `spare` and every read and write of `tls` are used only under `lock`
        // (shutdown and close excepted, which TLSConnection allows from any thread).
        let tls: TLSConnection
        private let descriptor: MediaDescriptor
        private let lock = NSLock()
        private var decoder = FrameDecoder(maximumFrameLength: MediaData.maximumFrameLength)
        /// Where the TLS reads land, the same memory every time (fresh pages for each read cost more than the copy).
        private let received = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 16)
        /// Reads sent and not answered yet, oldest first.
        private var inFlight: [MediaRead] = []
        /// Answers that came before any reader asked for them (read ahead), at most `readsAhead` + 1 of them.
        private var arrived: [MediaData] = []
        /// Buffers of answers already taken, kept for the next ones (with `arrived`, at most `readsAhead` + 2).
        private var spare: [[UInt8]] = []

        /// Reads sent ahead of a sequential reader: each at most `MediaRead.maximumLength`, so castd holds at most
        /// this many megabytes more than the reader's own buffer.
        static let readsAhead = 2

        init(tls: TLSConnection, descriptor: MediaDescriptor) {
            self.tls = tls
            self.descriptor = descriptor
        }

        deinit { received.deallocate() }

        func read(at position: Int64, resource: Int, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            let wanted = min(buffer.count, MediaRead.maximumLength)
            guard wanted > 0 else { return 0 }
            lock.lock()
            defer { lock.unlock() }
            if resource != MediaRead.media { return try readWhole(at: position, resource: resource, wanted: wanted, into: buffer) }
            let count: Int
            if let index = arrived.firstIndex(where: { $0.offset == position }) {
                let data = arrived.remove(at: index)
                count = data.bytes.withUnsafeBytes { take($0, at: position, wanted: wanted, into: buffer) }
                recycle(data.bytes)
            } else {
                count = try awaitAnswer(at: position, wanted: wanted, into: buffer)
            }
            if count > 0 { try readAhead(from: position + Int64(count), length: wanted) }
            return count
        }

        /// Copies the first `wanted` bytes of an answer at `position` to `buffer`; what is left is kept for the next read.
        private func take(
            _ bytes: UnsafeRawBufferPointer, at position: Int64, wanted: Int, into buffer: UnsafeMutableRawBufferPointer
        ) -> Int {
            let count = min(bytes.count, wanted)
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[..<count]))
            if count < bytes.count {
                keep(UnsafeRawBufferPointer(rebasing: bytes[count...]), at: position + Int64(count), first: true)
            }
            return count
        }

        /// The answer that starts at `position`, on its way or asked for now, copied to `buffer`; the answers that
        /// come before it are kept (read ahead, or another reader's).
        private func awaitAnswer(at position: Int64, wanted: Int, into buffer: UnsafeMutableRawBufferPointer) throws
            -> Int
        {
            if !inFlight.contains(where: { $0.offset == position }) {
                try send(MediaRead(offset: position, length: wanted))
            }
            while true {
                let (read, reply) = try receive { read, bytes -> Int? in
                    guard read.offset == position else {
                        keep(bytes, at: read.offset, first: false)
                        return nil
                    }
                    return take(bytes, at: position, wanted: wanted, into: buffer)
                }
                switch reply {
                case .success(let count?): return count
                case .success(nil): continue
                case .failure(let error) where read.offset == position: throw error
                case .failure: continue  // a read ahead that failed: asked again, and failing then, when a reader needs it
                }
            }
        }

        /// A read of another resource than the media (the sidecar subtitle file, read whole once before the engine
        /// starts): asked now and answered straight into `buffer`, never read ahead; the media's answers that come
        /// before it are kept as any read ahead is.
        private func readWhole(at position: Int64, resource: Int, wanted: Int, into buffer: UnsafeMutableRawBufferPointer)
            throws -> Int
        {
            let asked = MediaRead(offset: position, length: wanted, resource: resource)
            try send(asked)
            while true {
                let (read, reply) = try receive { read, bytes -> Int? in
                    guard read == asked else {
                        keep(bytes, at: read.offset, first: false)
                        return nil
                    }
                    buffer.copyMemory(from: bytes)
                    return bytes.count
                }
                switch reply {
                case .success(let count?): return count
                case .success(nil): continue
                case .failure(let error) where read == asked: throw error
                case .failure: continue
                }
            }
        }

        /// Keeps an answer no reader waits for, in a spare buffer; the oldest goes when there are too many.
        private func keep(_ bytes: UnsafeRawBufferPointer, at offset: Int64, first: Bool) {
            var storage = spare.popLast() ?? []
            storage.append(contentsOf: bytes)
            let data = MediaData(offset: offset, bytes: storage)
            if first { arrived.insert(data, at: 0) } else { arrived.append(data) }
            // Too many: the oldest goes, never the rest of the answer a reader is taking now (inserted first).
            if arrived.count > Self.readsAhead + 1 { recycle((first ? arrived.removeLast() : arrived.removeFirst()).bytes) }
        }

        private func recycle(_ bytes: [UInt8]) {
            // Kept and spare together at most `readsAhead` + 2 megabytes.
            guard spare.count + arrived.count < Self.readsAhead + 2 else { return }
            var bytes = bytes
            bytes.removeAll(keepingCapacity: true)
            spare.append(bytes)
        }

        /// Keeps `readsAhead` reads in flight or arrived after `offset`, for media that can seek (a stream answers a
        /// read with what it has, so the next offset is known only once it answered).
        private func readAhead(from offset: Int64, length: Int) throws {
            guard descriptor.seekable else { return }
            var next = offset
            for _ in 0..<Self.readsAhead {
                if let size = descriptor.size, next >= size { return }
                if let known = arrived.first(where: { $0.offset == next }) {
                    next += Int64(known.bytes.count)
                } else if let sent = inFlight.first(where: { $0.offset == next }) {
                    next += Int64(sent.length)
                } else {
                    let remaining = descriptor.size.map { Int(min(Int64(length), $0 - next)) } ?? length
                    try send(MediaRead(offset: next, length: remaining))
                    next += Int64(remaining)
                }
            }
        }

        private func send(_ read: MediaRead) throws {
            try tls.write(Message.mediaRead(read).frame().encoded(), timeout: .seconds(10))
            inFlight.append(read)
        }

        /// Takes the answer to the oldest read in flight: its bytes go to `body` (a view valid only inside it), the
        /// sender's error comes back as the failure.
        private func receive<Taken>(_ body: (MediaRead, UnsafeRawBufferPointer) throws -> Taken) throws
            -> (MediaRead, Result<Taken, MediaLost>)
        {
            guard let read = inFlight.first else { preconditionFailure("waiting for an answer to no read") }
            while true {
                let taken = try decoder.nextFrame { type, payload -> Result<Taken, MediaLost> in
                    guard type == MessageType.mediaData.rawValue else {
                        switch try Message(Frame(type: type, payload: Array(payload))) {
                        case .error(let error):
                            return .failure(MediaLost("the sender cannot serve the media: \(error.message)"))
                        case let other:
                            throw MediaLost("the sender sent \(other.type) on the media connection")
                        }
                    }
                    guard payload.count >= 8 else { throw MediaLost("the sender sent mediaData without its offset") }
                    let offset = Int64(bigEndian: payload.loadUnaligned(as: Int64.self))
                    let bytes = UnsafeRawBufferPointer(rebasing: payload[8...])
                    guard offset == read.offset, bytes.count <= read.length else {
                        throw MediaLost(
                            "the sender answered a read at \(read.offset) with \(bytes.count) bytes at \(offset)")
                    }
                    return .success(try body(read, bytes))
                }
                if let taken {
                    inFlight.removeFirst()
                    return (read, taken)
                }
                let count: Int
                do {
                    count = try tls.read(into: received, timeout: RemoteSource.replyTimeout)
                } catch let error as SecurityError where error.kind == .timedOut {
                    throw MediaLost("the sender sent no media for \(RemoteSource.replyTimeout)")
                }
                guard count > 0 else { throw MediaLost("the sender closed the media connection") }
                decoder.feed(UnsafeRawBufferPointer(rebasing: received[..<count]))
            }
        }
    }

    struct MediaLost: Error, Sendable, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
