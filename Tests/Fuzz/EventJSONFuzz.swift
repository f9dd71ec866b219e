// PlaybackEvent's JSON (what `castd --events` and `cast send --json` print, and the `event` message).
//
// Invariants: a decoded event encodes (`jsonLine` must not trap), its line decodes to an equal event,
// and the line is canonical (the event decoded from it prints the same line); numbers are finite; metadata and
// log entries stay within their bounds.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = Data(fuzzInput(data, size))
    guard let event = try? JSONDecoder().decode(PlaybackEvent.self, from: input) else { return 0 }
    switch event {
    case .durationAvailable(let duration): invariant(duration.isFinite, "duration \(duration) accepted")
    case .position(let seconds, let at):
        invariant(seconds.isFinite && at.isFinite, "position \(seconds) at \(at) accepted")
    case .buffered(let playable, let ahead, let linkRate, let wait):
        invariant(playable.isFinite && ahead.isFinite && playable >= 0 && ahead >= 0, "buffered \(playable) \(ahead)")
        invariant(
            [linkRate, wait].allSatisfy { ($0 ?? 0).isFinite && ($0 ?? 0) >= 0 },
            "link rate \(String(describing: linkRate)) wait \(String(describing: wait))")
    case .metadata(let metadata):
        invariant(metadata.items.count <= TimedMetadata.maximumItems, "\(metadata.items.count) metadata items")
        invariant(
            metadata.items.allSatisfy {
                !$0.key.isEmpty && $0.key.utf8.count <= TimedMetadata.maximumKeyBytes
                    && $0.value.utf8.count <= TimedMetadata.maximumValueBytes
            }, "metadata over its bounds")
    case .accessLog(let log):
        invariant(log.stalls >= 0 && log.bytesTransferred >= 0 && log.stallDuration >= 0, "negative access log")
        invariant((log.uri?.utf8.count ?? 0) <= AccessLogEntry.maximumTextBytes, "long uri")
    case .errorLog(let log):
        invariant(log.comment.utf8.count <= AccessLogEntry.maximumTextBytes, "long comment")
    default: break
    }
    let line = event.jsonLine
    invariant(!line.contains("\n"), "jsonLine has a newline: \(line)")
    guard let again = try? JSONDecoder().decode(PlaybackEvent.self, from: Data(line.utf8)) else {
        invariant(false, "jsonLine does not decode: \(line)")
        return 0
    }
    invariant(again == event, "round trip changed \(event) to \(again) via \(line)")
    invariant(again.jsonLine == line, "jsonLine not canonical: \(line) vs \(again.jsonLine)")
    invariant(again.name == event.name, "event name changed")
    return 0
}
