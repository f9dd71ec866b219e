import CastProtocol
import Foundation

/// Answers a worker's reads of served media (`read` → `data` or `readFailed`) from the session's media connection,
/// seeking it when a read does not start where the last one ended. Session and thumbnail workers read alike.
///
/// Thread-safety: a value owned by one server thread.
struct MediaReadServer {
    private let source: RemoteSource
    /// Where the next read of `source` starts; -1 when unknown (another reader may have moved it).
    private var position: Int64
    /// The play request's subtitle file (reads of `MediaRead.subtitles`), if it has one, and where it stands.
    private var subtitles: (source: RemoteSource, position: Int64)?
    /// The bytes of the read being answered: the same memory for every read (see `RemoteSource`'s buffers).
    private let scratch: Scratch

    /// `position` is where `source` stands now, or -1 when that is unknown (then the first read seeks, if it can).
    init(source: RemoteSource, position: Int64, subtitles: RemoteSource? = nil) {
        self.source = source
        self.position = position
        self.subtitles = subtitles.map { ($0, 0) }
        self.scratch = Scratch(byteCount: MediaRead.maximumLength)
    }

    /// Answers `read` on `channel`: its bytes (fewer at the end of the media, none past it), sent from the scratch
    /// buffer without another copy, or why they cannot be had.
    /// - Throws: when the channel cannot take the answer (the worker is gone).
    mutating func answer(_ read: MediaRead, on channel: WorkerChannel) throws {
        let scratch = scratch.bytes
        if read.resource == MediaRead.subtitles {
            guard var file = subtitles else {
                return try channel.send(.readFailed("the play request has no subtitle file"))
            }
            defer { subtitles = file }
            return try Self.answer(read, from: file.source, at: &file.position, scratch: scratch, on: channel)
        }
        try Self.answer(read, from: source, at: &position, scratch: scratch, on: channel)
    }

    /// Reads `read` from `source`, which stands at `position` (seeking it when the read starts elsewhere), into
    /// `scratch`, and sends the bytes or the failure on `channel`.
    private static func answer(
        _ read: MediaRead, from source: RemoteSource, at position: inout Int64, scratch: UnsafeMutableRawBufferPointer,
        on channel: WorkerChannel
    ) throws {
        let count: Int
        do {
            if read.offset != position {
                try source.seek(to: read.offset)
                position = read.offset
            }
            count = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: scratch[..<read.length]))
            position += Int64(count)
        } catch {
            try channel.send(.readFailed("\(error)"))
            return
        }
        try channel.sendData(offset: read.offset, bytes: UnsafeRawBufferPointer(rebasing: scratch[..<count]))
    }

    /// Memory that lives as long as the server (a struct cannot free it in a deinit).
    private final class Scratch: @unchecked Sendable {
        // Invariant: used only by the server thread that owns the MediaReadServer.
        let bytes: UnsafeMutableRawBufferPointer
        init(byteCount: Int) { bytes = .allocate(byteCount: byteCount, alignment: 16) }
        deinit { bytes.deallocate() }
    }
}
