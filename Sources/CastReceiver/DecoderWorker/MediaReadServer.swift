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

    /// `position` is where `source` stands now, or -1 when that is unknown (then the first read seeks, if it can).
    init(source: RemoteSource, position: Int64, subtitles: RemoteSource? = nil) {
        self.source = source
        self.position = position
        self.subtitles = subtitles.map { ($0, 0) }
    }

    /// The answer to `read`: its bytes (fewer at the end of the media, none past it) or why they cannot be had.
    mutating func answer(_ read: MediaRead) -> WorkerMessage {
        if read.resource == MediaRead.subtitles {
            guard var file = subtitles else { return .readFailed("the play request has no subtitle file") }
            var server = MediaReadServer(source: file.source, position: file.position)
            defer {
                file.position = server.position
                subtitles = file
            }
            return server.answer(MediaRead(offset: read.offset, length: read.length))
        }
        do {
            if read.offset != position {
                try source.seek(to: read.offset)
                position = read.offset
            }
            // Not zero-filled first: the sender's bytes overwrite every one that is kept.
            var failure: (any Error)?
            let bytes = [UInt8](unsafeUninitializedCapacity: read.length) { buffer, count in
                do {
                    count = try source.read(into: UnsafeMutableRawBufferPointer(buffer))
                } catch {
                    count = 0
                    failure = error
                }
            }
            if let failure { throw failure }
            position += Int64(bytes.count)
            return .data(MediaData(offset: read.offset, bytes: bytes))
        } catch {
            return .readFailed("\(error)")
        }
    }
}
