import CastBase
import CastMedia
import CastProtocol
import CastSecurity
import CastSystem
import Foundation
import Synchronization

/// The media a sender serves, read over its media connection: each read asks for a byte range
/// (`mediaRead`) and waits for the bytes (`mediaData`). Seeking moves the offset of the next read.
///
/// Several readers may share one media connection (`anotherReader()`: the thumbnailer reads the
/// media while the engine plays it), each with its own position; their request/answer pairs take
/// turns on the connection.
///
/// Thread-safety: `read` and `seek` of one reader are called by one thread at a time (the
/// engine's reader), its position an atomic for the rest; the connection is used by one read at a time (the
/// channel's lock); `cancel` may come from any thread: the first reader's shuts the socket down, which TLSConnection
/// allows.
final class RemoteSource: MediaSource, Sendable {
    private let channel: Channel
    private let descriptor: MediaDescriptor
    private let position = Atomic<Int64>(0)
    /// Whether cancelling this reader ends the connection (the engine's reader) or only this reader.
    private let ownsConnection: Bool
    /// Which served file it reads (`MediaRead.resource`): the media, or the play request's subtitle file.
    private let resource: Int
    private let cancelled = Atomic(false)

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

    /// The bytes of media received over the connection so far, by every reader (what crossed the link, beside the
    /// file's size).
    var bytesFetched: Int64 { channel.bytesFetched }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try withBytes(upTo: buffer.count) { bytes in
            buffer.copyMemory(from: bytes)
            return bytes.count
        }
    }

    /// Reads up to `count` bytes at the current position as `read(into:)` does, handing `body` a view of them where
    /// they were received (valid only inside `body`), so that castd passes them on to its worker without copying them
    /// first; an empty view at the end of the media. Other readers of the connection wait while `body` runs.
    func withBytes<Result>(upTo count: Int, _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result {
        if cancelled.load(ordering: .acquiring) { throw MediaLost("the read was cancelled") }
        var taken = 0
        let start = position.load(ordering: .relaxed)
        let result = try channel.withAnswer(at: start, resource: resource, wanted: count) { bytes in
            taken = bytes.count
            return try body(bytes)
        }
        position.add(Int64(taken), ordering: .relaxed)
        return result
    }

    func seek(to offset: Int64) throws {
        guard descriptor.seekable else { throw MediaLost("the media is a stream and cannot seek") }
        position.store(offset, ordering: .relaxed)
    }

    func cancel() {
        if ownsConnection {
            channel.tls.shutdown()
        } else {
            cancelled.store(true, ordering: .releasing)
        }
    }

    /// Ends the media connection (the session is over).
    func close() { channel.tls.close() }

    /// The connection and its frame decoder, shared by the readers: one reader at a time asks and waits. What arrives
    /// is kept as byte ranges (`MediaRangeCache`, at most `cacheCapacity` bytes, least recently used out first), so
    /// that nothing is fetched twice over the link: a read inside a known range costs nothing, a seek keeps the ranges,
    /// and the answers still on their way after a seek are kept like any other. For media that can seek (a file), each
    /// read also asks for the next ranges nobody has asked for (`readsAhead` of them, the reader's length each), so
    /// the sender's reading and sending overlap castd's receiving instead of waiting for a round trip per read; a
    /// stream's next read is asked for the moment the answer before it arrived (its offset known only then). The
    /// sender answers reads in the order they were sent (docs/protocol.md), so every answer is checked against the
    /// oldest read in flight (`MediaReadsInFlight`) from its header alone, before a byte of it is stored.
    ///
    /// An answer's bytes are decrypted straight into memory of its own (`Answer`), not through the frame decoder: the
    /// decoder only ever holds frame headers and the sender's error messages. A reader is handed a view of that memory
    /// (`withAnswer`).
    private final class Channel: @unchecked Sendable {
        // Invariant: `decoder`, `received`, `inFlight`, `cache`, `endOfMedia`, `fetched` and every read and write of
        // `tls` are used only under `lock` (shutdown and close excepted, which TLSConnection allows from any thread);
        // an `Answer`'s memory is touched only under `lock`.
        let tls: TLSConnection
        private let descriptor: MediaDescriptor
        private let lock = NSLock()
        private var decoder = FrameDecoder(maximumFrameLength: MediaData.maximumFrameLength)
        /// Where frame headers and error messages are decrypted: small, the same memory every time.
        private let received = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 16)
        /// Reads sent and not answered yet, oldest first.
        private var inFlight = MediaReadsInFlight(limit: Channel.readsAhead + 2)
        /// The media's bytes that arrived, by range.
        private var cache = MediaRangeCache<Answer>(capacity: Channel.cacheCapacity)
        /// Where the sender answered a read of the media with no bytes: its end.
        private var endOfMedia: Int64?
        /// Bytes of media received over the link (answers' bytes, the subtitle file's included).
        private var fetched: Int64 = 0
        /// For a stream: where the bytes that arrived end, the offset of its next read.
        private var streamEnd: Int64 = 0
        /// Why the connection cannot be read any more (the sender broke the protocol, went silent or closed it):
        /// every later read fails the same way, instead of taking the rest of a refused frame for the next one.
        private var broken: MediaLost?

        /// Reads sent ahead of a sequential reader, each at most `MediaRead.maximumLength`. Two: with three, the
        /// sender's TCP, handed four reads' worth at once on a slow link, overshot a shaped link's queue while it started
        /// and lost a second to retransmission timeouts in every play (docs/performance.md); two keep the link as busy.
        static let readsAhead = 2
        /// The most bytes of the media kept: what the demuxer may come back to (the start of the file after an
        /// index read at its end, MP4 interleaving, a seek back past the worker's own 256 KiB behind its position)
        /// without a byte crossing the link again. Six, not the twelve of before: the worker's read-ahead ring (8
        /// MiB ahead) holds the same bytes ahead of the position, and twelve made castd + its worker hold a 15 MB
        /// film's bytes about twice over, beyond issue 30's memory budget (docs/performance.md); the least recently
        /// used out first keeps the reads ahead and what was read last.
        static let cacheCapacity = 6 << 20

        init(tls: TLSConnection, descriptor: MediaDescriptor) {
            self.tls = tls
            self.descriptor = descriptor
        }

        deinit { received.deallocate() }

        /// The bytes of media received over the link so far.
        var bytesFetched: Int64 { lock.withLock { fetched } }

        /// Hands `body` up to `wanted` bytes of the media (or of `resource`) at `position`: from the bytes that arrived
        /// already, or from the answer to a read asked for now; an empty view at the end of the media.
        func withAnswer<Result>(
            at position: Int64, resource: Int, wanted: Int, _ body: (UnsafeRawBufferPointer) throws -> Result
        ) throws -> Result {
            let wanted = min(wanted, MediaRead.maximumLength)
            guard wanted > 0 else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
            lock.lock()
            defer { lock.unlock() }
            if let broken { throw broken }
            if resource != MediaRead.media {
                let answer = try awaitAnswer(to: MediaRead(offset: position, length: wanted, resource: resource))
                return try body(UnsafeRawBufferPointer(rebasing: answer.bytes[..<min(answer.count, wanted)]))
            }
            while true {
                if let known = cache.lookup(position) {
                    let count = min(known.count, wanted)
                    if count < wanted, descriptor.seekable, let joined = try joined(at: position, wanted: wanted) {
                        defer { joined.deallocate() }
                        try readAhead(from: position + Int64(joined.count), length: wanted)
                        return try body(UnsafeRawBufferPointer(joined))
                    }
                    // The next ranges are asked for before this one is passed on, so that the sender works meanwhile.
                    try readAhead(from: position + Int64(count), length: wanted)
                    return try body(
                        UnsafeRawBufferPointer(rebasing: known.block.bytes[known.start..<(known.start + count)]))
                }
                if let endOfMedia, position >= endOfMedia {
                    return try body(UnsafeRawBufferPointer(start: nil, count: 0))
                }
                if !inFlight.reads.contains(where: { $0.resource == nil && $0.covers(position) }) {
                    // Every place may be taken by reads ahead that nobody wants now (after a seek): their answers
                    // make room, and are kept; one of them may hold `position`, so look again after each.
                    if inFlight.isFull {
                        try keep(receive(), waitingAt: position)
                        continue
                    }
                    // Neither known nor asked for: the gap starts at `position`.
                    let read = cache.missing(
                        from: position, depth: wanted, length: wanted, size: nil, inFlight: inFlight.reads, free: 1)[0]
                    try send(read)
                    try readAhead(from: read.offset + Int64(read.length), length: wanted)
                }
                try keep(receive(), waitingAt: position)
            }
        }

        /// For media that can seek (a stream's reader takes what arrived at once: a live screen's picture is not held
        /// for the next), up to `wanted` bytes from `position` (where a range that arrived begins, shorter than
        /// `wanted`) copied into memory of their own: that range, and the ranges after it that arrived, are on their
        /// way (their reads in flight), or are asked for now (once); nil when nothing continues the first range.
        /// A reader's read is answered whole instead of short where castd's ranges end (its reads ahead are cut to the
        /// reader's length of the moment, which changes with the measured rate): a short answer left the worker to
        /// ask for the rest on its own, behind the reads it had asked ahead, which castd answers in order, each
        /// waiting for its bytes on the link in turn (1–2 s on a link 1.5 times a film's rate, a stall, while the
        /// bytes it wanted had arrived). The caller deallocates the memory.
        private func joined(at position: Int64, wanted: Int) throws -> UnsafeMutableRawBufferPointer? {
            var buffer: UnsafeMutableRawBufferPointer?
            var filled = 0
            var asked = false
            while filled < wanted {
                let at = position + Int64(filled)
                if let known = cache.lookup(at) {
                    let count = min(known.count, wanted - filled)
                    let target = buffer ?? .allocate(byteCount: wanted, alignment: 16)
                    buffer = target
                    UnsafeMutableRawBufferPointer(rebasing: target[filled..<(filled + count)])
                        .copyMemory(
                            from: UnsafeRawBufferPointer(
                                rebasing: known.block.bytes[known.start..<(known.start + count)]))
                    filled += count
                    continue
                }
                guard filled > 0, endOfMedia.map({ at < $0 }) ?? true, descriptor.size.map({ at < $0 }) ?? true else {
                    break
                }
                // What arrives is kept; a failure of the continuation ends the answer here, and the reader's next
                // read meets it.
                do {
                    if !inFlight.reads.contains(where: { $0.resource == nil && $0.covers(at) }) {
                        guard descriptor.seekable, !asked else { break }
                        if !inFlight.isFull {
                            let rest = wanted - filled
                            let reads = cache.missing(
                                from: at, depth: rest, length: rest, size: descriptor.size, inFlight: inFlight.reads,
                                free: 1)
                            guard let read = reads.first else { break }
                            try send(read)
                            asked = true
                            continue
                        }
                    }
                    try keep(receive(), waitingAt: nil)
                } catch {
                    // The connection broke (the sender went silent, or closed it): that is the read's failure, not
                    // the next write's on a connection shut down.
                    if let broken {
                        buffer?.deallocate()
                        throw broken
                    }
                    break
                }
            }
            guard let buffer, filled > 0 else { return nil }
            return UnsafeMutableRawBufferPointer(rebasing: buffer[..<filled])
        }

        /// The answer to `read` of another resource than the media, asked for now; the answers that come before it are
        /// kept.
        private func awaitAnswer(to read: MediaRead) throws -> Answer {
            while inFlight.isFull { try keep(receive(), waitingAt: nil) }
            try send(read)
            while true {
                let (answered, reply) = try receive()
                guard answered == read else {
                    try keep((answered, reply), waitingAt: nil)
                    continue
                }
                return try reply.get()
            }
        }

        /// Keeps an answer of the media in the cache. A read that failed is forgotten (asked again, and failing then,
        /// when a reader needs it), unless it holds `position`, where a reader waits: then it is that reader's failure.
        private func keep(_ reply: (MediaRead, Result<Answer, MediaLost>), waitingAt position: Int64?) throws {
            let (read, result) = reply
            guard read.resource == nil else { return }
            switch result {
            case .success(let answer) where answer.count == 0:
                endOfMedia = min(endOfMedia ?? read.offset, read.offset)
            case .success(let answer):
                cache.insert(offset: read.offset, count: answer.count, block: answer)
                streamEnd = max(streamEnd, read.offset + Int64(answer.count))
            case .failure(let failure):
                if let position, read.covers(position) { throw failure }
            }
        }

        /// Keeps `readsAhead` reads' worth of the media after `offset` known or on its way, for media that can seek. A
        /// stream answers a read with what it has, so its next offset is known only once it answered: then its next
        /// read is asked for at once (`askStreamAhead`).
        private func readAhead(from offset: Int64, length: Int) throws {
            guard descriptor.seekable else { return try askStreamAhead(length: length) }
            let free = inFlight.limit - inFlight.reads.count - 1
            guard free > 0 else { return }
            for read in cache.missing(
                from: offset, depth: Self.readsAhead * length, length: length, size: descriptor.size,
                inFlight: inFlight.reads, free: min(free, Self.readsAhead))
            {
                try send(read)
            }
        }

        /// Keeps one read of a stream in flight at the end of what arrived, asked for as soon as the answer before it
        /// came, before a reader is handed those bytes: the sender waits at its pipe for the next bytes, and sends them
        /// the moment they exist (a live screen's picture), instead of after a request's trip from the decoder worker
        /// through castd (issue 32). The stream's order is kept: the offset is where the last answer ended.
        private func askStreamAhead(length: Int) throws {
            guard endOfMedia == nil, !inFlight.isFull, !inFlight.reads.contains(where: { $0.resource == nil }) else {
                return
            }
            try send(MediaRead(offset: streamEnd, length: length))
        }

        private func send(_ read: MediaRead) throws {
            try tls.write(Message.mediaRead(read).frame().encoded(), timeout: .seconds(10))
            inFlight.sent(read)
        }

        /// Takes the answer to the oldest read in flight: its bytes decrypted straight into a kept buffer once the
        /// frame's header showed it is the answer due, or the sender's error as the failure.
        /// - Throws: `MediaLost` when the sender breaks the protocol (an answer out of order, longer than asked, or
        ///   to no read; another message than `mediaData` or `error`), goes silent or closes the connection.
        private func receive() throws -> (MediaRead, Result<Answer, MediaLost>) {
            do {
                return try receiveFrame()
            } catch {
                let lost = error as? MediaLost ?? MediaLost("the media connection failed: \(error)")
                broken = lost
                tls.shutdown()
                throw lost
            }
        }

        private func receiveFrame() throws -> (MediaRead, Result<Answer, MediaLost>) {
            while true {
                let start = try decoder.peekFrameStart(prefix: 8) { type, length, prefix -> FrameStart in
                    guard type == MessageType.mediaData.rawValue else { return .other(length: length) }
                    guard length >= 1 + 8 else { throw MediaLost("the sender sent mediaData without its offset") }
                    let offset = Int64(bigEndian: prefix.loadUnaligned(as: Int64.self))
                    return .answer(offset: offset, count: length - 1 - 8)
                }
                // No more than the frame asks for, so that an answer's bytes are not decrypted into `received`.
                var needed = Frame.headerSize + 1 + 8 - decoder.bufferedCount
                switch start {
                case .answer(let offset, let count)?:
                    let read: MediaRead
                    do {
                        read = try inFlight.answer(offset: offset, count: count)
                    } catch {
                        throw MediaLost("the sender broke the order of answers: \(error.message)")
                    }
                    _ = decoder.take(Frame.headerSize + 1 + 8, into: nil)
                    let answer = Answer(count: count)
                    fetched += Int64(count)
                    let target = UnsafeMutableRawBufferPointer(rebasing: answer.bytes[..<count])
                    var filled = decoder.take(count, into: target)
                    while filled < count {
                        filled += try readSome(into: UnsafeMutableRawBufferPointer(rebasing: target[filled...]))
                    }
                    return (read, .success(answer))
                case .other(let length)?:
                    if let failure = try decoder.nextFrame({ type, payload in try Self.refusal(type, payload) }) {
                        let read: MediaRead
                        do {
                            read = try inFlight.fail()
                        } catch {
                            throw MediaLost("the sender answered no read: \(failure.description)")
                        }
                        return (read, .failure(failure))
                    }
                    needed = Frame.headerSize + length - decoder.bufferedCount
                case nil:
                    break
                }
                let count = try readSome(
                    into: UnsafeMutableRawBufferPointer(rebasing: received[..<min(max(needed, 1), received.count)]))
                decoder.feed(UnsafeRawBufferPointer(rebasing: received[..<count]))
            }
        }

        /// What the start of the next frame on the connection showed.
        private enum FrameStart {
            /// `mediaData`: `count` bytes at `offset` follow.
            case answer(offset: Int64, count: Int)
            /// Another message, `length` bytes with its type byte.
            case other(length: Int)
        }

        /// What a frame other than `mediaData` says: the sender's error, as the read's failure.
        private static func refusal(_ type: UInt8, _ payload: UnsafeRawBufferPointer) throws -> MediaLost {
            switch try Message(Frame(type: type, payload: Array(payload))) {
            case .error(let error): return MediaLost("the sender cannot serve the media: \(error.message)")
            case let other: throw MediaLost("the sender sent \(other.type) on the media connection")
            }
        }

        /// Decrypts what has arrived into `buffer` (at least one byte), waiting at most `replyTimeout`.
        private func readSome(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            let count: Int
            do {
                count = try tls.read(into: buffer, timeout: RemoteSource.replyTimeout)
            } catch let error as SecurityError where error.kind == .timedOut {
                throw MediaLost("the sender sent no media for \(RemoteSource.replyTimeout)")
            }
            guard count > 0 else { throw MediaLost("the sender closed the media connection") }
            return count
        }
    }

    /// Memory for one answer: its `count` bytes, freed when no range of the cache holds it any more.
    private final class Answer {
        let bytes: UnsafeMutableRawBufferPointer
        var count: Int { bytes.count }

        init(count: Int) { bytes = .allocate(byteCount: count, alignment: 16) }

        deinit { bytes.deallocate() }
    }

    struct MediaLost: Error, Sendable, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

extension MediaRead {
    /// Whether the read asks for the byte at `position`.
    fileprivate func covers(_ position: Int64) -> Bool { position >= offset && position < offset + Int64(length) }
}
