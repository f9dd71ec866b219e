// PlaybackEvent's JSON (what `castd --events` and `cast send --json` print, and the `event` message).
//
// Invariants: a decoded event encodes (`jsonLine` must not trap), its line decodes to an equal event,
// and the line is canonical (the event decoded from it prints the same line); numbers are finite.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = Data(fuzzInput(data, size))
    guard let event = try? JSONDecoder().decode(PlaybackEvent.self, from: input) else { return 0 }
    switch event {
    case .durationAvailable(let duration): invariant(duration.isFinite, "duration \(duration) accepted")
    case .position(let seconds, let at): invariant(seconds.isFinite && at.isFinite, "position \(seconds) at \(at) accepted")
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
