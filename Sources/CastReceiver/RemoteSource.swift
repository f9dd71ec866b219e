import CastMedia
import CastProtocol
import CastSecurity
import Foundation

/// The media a sender serves, read over its media connection: each read asks for a byte range
/// (`mediaRead`) and waits for the bytes (`mediaData`). Seeking moves the offset of the next read.
///
/// Thread-safety: `read` and `seek` are called by one thread at a time (the engine's reader);
/// `cancel` may come from any thread and only shuts the socket down, which TLSConnection allows.
final class RemoteSource: MediaSource, @unchecked Sendable {
    private let tls: TLSConnection
    private let descriptor: MediaDescriptor
    private var decoder = FrameDecoder(maximumFrameLength: MediaData.maximumFrameLength)
    private var position: Int64 = 0

    /// How long the sender may take to answer one read before the media counts as lost.
    static let replyTimeout: Duration = .seconds(15)

    init(tls: TLSConnection, descriptor: MediaDescriptor) {
        self.tls = tls
        self.descriptor = descriptor
    }

    var size: Int64? { descriptor.size }
    var isSeekable: Bool { descriptor.seekable }
    var nameHint: String? { descriptor.nameHint }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let wanted = min(buffer.count, MediaRead.maximumLength)
        guard wanted > 0 else { return 0 }
        try tls.write(Message.mediaRead(MediaRead(offset: position, length: wanted)).frame().encoded(), timeout: .seconds(10))
        while true {
            if let frame = try decoder.nextFrame() {
                switch try Message(frame) {
                case .mediaData(let data):
                    guard data.offset == position, data.bytes.count <= wanted else {
                        throw MediaLost("the sender answered a read at \(position) with \(data.bytes.count) bytes at \(data.offset)")
                    }
                    data.bytes.withUnsafeBytes { buffer.copyMemory(from: $0) }
                    position += Int64(data.bytes.count)
                    return data.bytes.count
                case .error(let error):
                    throw MediaLost("the sender cannot serve the media: \(error.message)")
                case let other:
                    throw MediaLost("the sender sent \(other.type) on the media connection")
                }
            }
            let bytes: [UInt8]
            do {
                bytes = try tls.read(maxCount: 256 * 1024, timeout: Self.replyTimeout)
            } catch let error as SecurityError where error.kind == .timedOut {
                throw MediaLost("the sender sent no media for \(Self.replyTimeout)")
            }
            guard !bytes.isEmpty else { throw MediaLost("the sender closed the media connection") }
            decoder.feed(bytes)
        }
    }

    func seek(to offset: Int64) throws {
        guard descriptor.seekable else { throw MediaLost("the media is a stream and cannot seek") }
        position = offset
    }

    func cancel() { tls.shutdown() }

    /// Ends the media connection (the session is over).
    func close() { tls.close() }

    struct MediaLost: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
