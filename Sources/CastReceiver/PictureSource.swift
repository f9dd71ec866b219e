import CastMedia
import CastProtocol
import Foundation
import Synchronization

/// A picture an AirPlay client sent (`PUT /photo`), held in castd's memory and served to the engine's reads like a
/// sender's file: castd never decodes it, the decoder worker does (docs/security.md).
///
/// Thread-safety: the bytes are immutable; the position and the cancellation are atomics. One reader thread reads
/// and seeks at a time, as `MediaSource` asks.
final class PictureSource: ServedMedia, Sendable {
    /// The picture's bytes, as the client sent them.
    let bytes: [UInt8]
    private let position = Atomic<Int64>(0)
    private let cancelled = Atomic(false)

    /// Serves `bytes`.
    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var size: Int64? { Int64(bytes.count) }
    /// None: the bytes say what the picture is.
    var nameHint: String? { nil }
    var isSeekable: Bool { true }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try withBytes(upTo: buffer.count) { part in
            buffer.copyMemory(from: part)
            return part.count
        }
    }

    func withBytes<Result>(upTo count: Int, _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result {
        if cancelled.load(ordering: .acquiring) { throw RemoteSource.MediaLost("the read was cancelled") }
        let start = Int(min(max(position.load(ordering: .relaxed), 0), Int64(bytes.count)))
        let end = start + min(max(count, 0), bytes.count - start)
        let result = try bytes.withUnsafeBytes { all in try body(UnsafeRawBufferPointer(rebasing: all[start..<end])) }
        position.store(Int64(end), ordering: .relaxed)
        return result
    }

    func seek(to offset: Int64) throws {
        guard offset >= 0 else { throw RemoteSource.MediaLost("a seek before the picture's start") }
        position.store(offset, ordering: .relaxed)
    }

    func cancel() { cancelled.store(true, ordering: .releasing) }

    func subtitles(_ file: SubtitleFile) -> (any ServedMedia)? { nil }
}
