import CastMedia
import CastProtocol
import Foundation

/// Reads a play request's subtitle file (`PlayRequest.subtitles`) whole, before the engine starts: in the decoder
/// worker over its channel, or in castd over the media connection when decoding runs there. At most
/// `SubtitleFile.maximumSize` bytes; a file that cannot be read is reported on standard error and the film plays
/// without it (subtitles never stop a film).
enum SubtitleFileReader {
    /// The file's bytes, read by `chunk(offset, length)` (which returns fewer bytes only at the end), or nil.
    static func read(_ file: SubtitleFile, chunk: (Int64, Int) throws -> [UInt8]) -> [UInt8]? {
        let size = min(max(file.size, 0), SubtitleFile.maximumSize)
        var bytes: [UInt8] = []
        do {
            while Int64(bytes.count) < size {
                let length = min(MediaRead.maximumLength, Int(size) - bytes.count)
                let part = try chunk(Int64(bytes.count), length)
                if part.isEmpty { break }
                bytes += part.prefix(length)
            }
        } catch {
            FileHandle.standardError.write(Data("castd: the subtitle file cannot be read: \(error)\n".utf8))
            return nil
        }
        return bytes.isEmpty ? nil : bytes
    }

    /// Over the media connection (castd decoding itself).
    static func read(_ file: SubtitleFile, from source: any ServedMedia) -> [UInt8]? {
        read(file) { offset, length in
            try source.seek(to: offset)
            return try [UInt8](unsafeUninitializedCapacity: length) { buffer, count in
                count = 0
                count = try source.read(into: UnsafeMutableRawBufferPointer(buffer))
            }
        }
    }

    /// Over the worker's channel, before its reader thread runs: each read's answer is the next `data` or
    /// `readFailed`; a control that comes first goes to `early`, to be applied once the engine exists.
    static func read(_ file: SubtitleFile, over channel: WorkerChannel, early: (PlaybackControl) -> Void) -> [UInt8]? {
        read(file) { offset, length in
            try channel.send(.read(MediaRead(offset: offset, length: length, resource: MediaRead.subtitles)))
            while true {
                switch try channel.receive() {
                case .data(let data)?:
                    guard data.offset == offset, data.bytes.count <= length else {
                        throw WorkerFailure("castd answered a subtitle read at \(offset) with one at \(data.offset)")
                    }
                    return data.bytes
                case .readFailed(let why)?: throw WorkerFailure(why)
                case .control(let control)?: early(control)
                case nil: throw WorkerFailure("castd closed the channel")
                default: continue
                }
            }
        }
    }
}
