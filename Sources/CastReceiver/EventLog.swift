import CastProtocol
import Foundation
import Synchronization

/// `castd --events`: every event sent to a sender, as a JSON line, to a file or standard output.
/// Thread-safety: the handle is written under a lock, one whole line at a time.
public final class EventLog: Sendable {
    private let handle: Mutex<FileHandle>

    /// Opens `path` for appending (created if missing); "-" is standard output.
    public init(path: String) throws {
        if path == "-" {
            handle = Mutex(FileHandle.standardOutput)
            return
        }
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw EventLogError(description: "cannot create the events file \(path)")
            }
        }
        guard let file = FileHandle(forWritingAtPath: path) else {
            throw EventLogError(description: "cannot write the events file \(path)")
        }
        file.seekToEndOfFile()
        handle = Mutex(file)
    }

    /// Writes one event.
    func write(_ event: PlaybackEvent) {
        let line = Data((event.jsonLine + "\n").utf8)
        handle.withLock { $0.write(line) }
    }

    struct EventLogError: Error, CustomStringConvertible {
        let description: String
    }
}
