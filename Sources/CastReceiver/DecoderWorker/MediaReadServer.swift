import CastProtocol
import Foundation

/// Answers a worker's reads of served media (`read` → `data` or `readFailed`) from the session's media connection (or
/// the picture castd holds), seeking it when a read does not start where the last one ended. Session and thumbnail
/// workers read alike; a mirror session's live stream is pushed instead (`push`).
///
/// Thread-safety: a value owned by one server thread.
struct MediaReadServer {
    private let source: any ServedMedia
    /// Where the next read of `source` starts; -1 when unknown (another reader may have moved it).
    private var position: Int64
    /// The play request's subtitle file (reads of `MediaRead.subtitles`), if it has one, and where it stands.
    private var subtitles: (source: any ServedMedia, position: Int64)?

    /// `position` is where `source` stands now, or -1 when that is unknown (then the first read seeks, if it can).
    init(source: any ServedMedia, position: Int64, subtitles: (any ServedMedia)? = nil) {
        self.source = source
        self.position = position
        self.subtitles = subtitles.map { ($0, 0) }
    }

    /// Answers `read` on `channel`: its bytes (fewer at the end of the media, none past it), sent from where they
    /// were decrypted without another copy, or why they cannot be had.
    /// - Throws: when the channel cannot take the answer (the worker is gone).
    mutating func answer(_ read: MediaRead, on channel: WorkerChannel) throws {
        if read.resource == MediaRead.subtitles {
            guard var file = subtitles else {
                return try channel.send(.readFailed("the play request has no subtitle file"))
            }
            defer { subtitles = file }
            return try Self.answer(read, from: file.source, at: &file.position, on: channel)
        }
        try Self.answer(read, from: source, at: &position, on: channel)
    }

    /// Pushes a live stream (a mirror session's) to the worker as its bytes arrive from the sender: each piece goes on
    /// the moment it came, at the offset where the one before ended, without waiting for the worker to ask
    /// (`PushedStreamSource` takes them); an empty piece at the stream's end; `readFailed` when the sender's media
    /// fails, and nothing after it. The sender is asked for the next piece before one is passed on (`RemoteSource`).
    /// - Throws: when the channel cannot take a piece (the worker is gone, or took none for the channel's timeout).
    static func push(_ source: any ServedMedia, on channel: WorkerChannel) throws {
        struct ChannelFailure: Error { let error: any Error }
        var position: Int64 = 0
        while true {
            let count: Int
            do {
                count = try source.withBytes(upTo: MediaRead.maximumLength) { bytes in
                    do {
                        try channel.sendData(offset: position, bytes: bytes)
                    } catch {
                        throw ChannelFailure(error: error)
                    }
                    return bytes.count
                }
            } catch let failure as ChannelFailure {
                throw failure.error
            } catch {
                return try channel.send(.readFailed("\(error)"))
            }
            if count == 0 { return }
            position += Int64(count)
        }
    }

    /// Reads `read` from `source`, which stands at `position` (seeking it when the read starts elsewhere), and sends
    /// the bytes or the failure on `channel`.
    private static func answer(
        _ read: MediaRead, from source: any ServedMedia, at position: inout Int64, on channel: WorkerChannel
    ) throws {
        // Thrown by the channel (the worker is gone), not by the media.
        struct ChannelFailure: Error { let error: any Error }
        do {
            if read.offset != position {
                try source.seek(to: read.offset)
                position = read.offset
            }
            let count = try source.withBytes(upTo: read.length) { bytes in
                do {
                    try channel.sendData(offset: read.offset, bytes: bytes)
                } catch {
                    throw ChannelFailure(error: error)
                }
                return bytes.count
            }
            position += Int64(count)
        } catch let failure as ChannelFailure {
            throw failure.error
        } catch {
            try channel.send(.readFailed("\(error)"))
        }
    }
}
