public import CastProtocol
import Foundation

/// What a castd wrote with `--events FILE`: one JSON event a line, as it sends them to senders. A line that is no
/// event (the last one, while castd is still writing it) is left out.
public enum EventFile {
    /// Every event in the file, in order; none when there is no file yet.
    public static func events(at path: String) -> [PlaybackEvent] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap {
            try? JSONDecoder().decode(PlaybackEvent.self, from: Data($0.utf8))
        }
    }

    /// The instants of the file's `scheduledStart` events (that castd's CLOCK_MONOTONIC, ns), in order: when each
    /// scheduled resume really starts its playback.
    public static func scheduledStarts(at path: String) -> [Int64] {
        events(at: path).compactMap { event in
            guard case .scheduledStart(let at, _) = event else { return nil }
            return at
        }
    }
}
