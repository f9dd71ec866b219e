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
        self.channel = Channel(tls: tls)
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

    /// The connection and its frame decoder, shared by the readers: one request/answer at a time.
    private final class Channel: @unchecked Sendable {
        // Invariant: `decoder` and every read and write of `tls` are used only under `lock`
        // (shutdown and close excepted, which TLSConnection allows from any thread).
        let tls: TLSConnection
        private let lock = NSLock()
        private var decoder = FrameDecoder(maximumFrameLength: MediaData.maximumFrameLength)

        init(tls: TLSConnection) { self.tls = tls }

        func read(at position: Int64, resource: Int, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            let wanted = min(buffer.count, MediaRead.maximumLength)
            guard wanted > 0 else { return 0 }
            lock.lock()
            defer { lock.unlock() }
            try tls.write(
                Message.mediaRead(MediaRead(offset: position, length: wanted, resource: resource)).frame().encoded(),
                timeout: .seconds(10))
            while true {
                if let frame = try decoder.nextFrame() {
                    switch try Message(frame) {
                    case .mediaData(let data):
                        guard data.offset == position, data.bytes.count <= wanted else {
                            throw MediaLost(
                                "the sender answered a read at \(position) with \(data.bytes.count) bytes at \(data.offset)")
                        }
                        data.bytes.withUnsafeBytes { buffer.copyMemory(from: $0) }
                        return data.bytes.count
                    case .error(let error):
                        throw MediaLost("the sender cannot serve the media: \(error.message)")
                    case let other:
                        throw MediaLost("the sender sent \(other.type) on the media connection")
                    }
                }
                let bytes: [UInt8]
                do {
                    bytes = try tls.read(maxCount: 256 * 1024, timeout: RemoteSource.replyTimeout)
                } catch let error as SecurityError where error.kind == .timedOut {
                    throw MediaLost("the sender sent no media for \(RemoteSource.replyTimeout)")
                }
                guard !bytes.isEmpty else { throw MediaLost("the sender closed the media connection") }
                decoder.feed(bytes)
            }
        }
    }

    struct MediaLost: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
