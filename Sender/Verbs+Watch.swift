// cast watch: follow a receiver's events.
import CastBase
import CastCommandLine
import CastProtocol
import CastSender
import Dispatch
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

func watch(_ arguments: ParsedArguments) throws(CastError) {
    try withReceiver(arguments, verb: "watch") { connection, _ throws(CastError) in
        signal(SIGINT, SIG_IGN)
        // The main thread blocks in receive: the handler runs on another queue.
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler { exit(0) }
        source.resume()
        interruptSource = source
        try connection.send(.watch)
        let json = arguments.has("json")
        while true {
            let message: ReceiverConnection.Pushed
            do throws(CastError) {
                message = try connection.nextPushed()
            } catch {
                throw CastError(
                    .connectionLost, "lost \(printable(connection.welcome.name)): \(printable(error.message))")
            }
            switch message {
            case .status(let status):
                output(json ? watchedStatusJSON(status) : watchedStatusText(status))
            case .event(let event):
                if json {
                    output(event.jsonLine)
                } else if case .position = event {
                    continue
                } else {
                    output(printable(describe(event)))
                }
            }
        }
    }
}

/// A status `cast watch` shows: the state, and what plays with its place in a queue ("state: playing (b.flac,
/// 2/3)").
func watchedStatusText(_ status: ReceiverStatus) -> String {
    let what = [status.title.map(printable), status.queue.map { "\($0.number)/\($0.count)" }].compactMap { $0 }
    return "state: \(status.state.rawValue)\(what.isEmpty ? "" : " (\(what.joined(separator: ", ")))")"
}

/// A status under `cast watch --json`: `{"event":"status","state":…}` with `title` and `queue` when known.
func watchedStatusJSON(_ status: ReceiverStatus) -> String {
    var object: [String: Any] = ["event": "status", "state": status.state.rawValue]
    if let title = status.title { object["title"] = title }
    if let queue = status.queue { object["queue"] = ["number": queue.number, "count": queue.count] }
    return json(object)
}

/// A track in a few words: "subtitle #2 fra subrip (shown)".
func trackText(_ track: MediaTrack) -> String {
    let number = track.index < 0 ? "file" : "#\(track.index)"
    let words = [track.kind.rawValue, number, track.language, track.title.map { "\"\($0)\"" }, track.codec]
    let state = track.selected ? (track.kind == .audio ? " (playing)" : " (shown)") : ""
    return words.compactMap { $0 }.joined(separator: " ") + state
}

/// One line for a person about an event.
/// A group member's step: "0.042 ms ahead of the group, rate trimmed −99.8 ppm", and when the correction it wanted
/// was out of range, "(held: the correction asked for was out of range)".
func syncText(offset: Double, trim: Double, limited: Bool = false) -> String {
    "\(fixed(abs(offset) * 1000, digits: 3)) ms \(offset < 0 ? "behind" : "ahead") of the group, rate trimmed "
        + "\(fixed(trim, digits: 1, sign: true)) ppm"
        + (limited ? " (held: the correction asked for was out of range)" : "")
}

func describe(_ event: PlaybackEvent) -> String {
    switch event {
    case .playbackState(let state): "state: \(state.rawValue)"
    case .loadState(let load): "load: \(load.wordList.joined(separator: ", "))"
    case .durationAvailable(let duration): "duration: \(clock(duration))"
    case .mediaTypes(let types): "media: \(types.map(\.rawValue).joined(separator: ", "))"
    case .naturalSize(let width, let height): "size: \(width)x\(height)"
    case .readyForDisplay: "ready for display"
    case .position(let seconds, _): "position: \(clock(seconds))"
    case .videoActive(let active): "video: \(active ? "on" : "off")"
    case .volume(let level, let muted): "volume: \(fixed(level, digits: 2))\(muted ? " (muted)" : "")"
    case .rate(let rate): "rate: \(rate)"
    case .buffered(let playable, let ahead, let linkRate, let wait):
        "buffered: \(clock(playable)) (\(Int(saturating: ahead)) s ahead)"
            + (linkRate.map { ", link \(StatusLine.rate($0))" } ?? "")
            + (wait.map { ", buffering, \(Int(saturating: min($0, 1e7).rounded(.up))) s" } ?? "")
    case .accessLog(let log): "access log: \(log.bytesTransferred) bytes, \(log.stalls) stalls"
    case .errorLog(let log): "error: \(log.domain) \(log.statusCode.map(String.init) ?? "-"): \(log.comment)"
    case .metadata(let metadata):
        "metadata: \(metadata.items.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", "))"
    case .tracks(let tracks): "tracks: \(tracks.map(trackText).joined(separator: "; "))"
    case .sync(let offset, let trim, let limited): "group: \(syncText(offset: offset, trim: trim, limited: limited))"
    case .scheduledStart(let at, let position): "scheduled start: \(clock(position)) at \(at) (receiver's monotonic ns)"
    case .joinRequest(let receiver): "asked to add \(printable(receiver)) to the group"
    case .skipRequest(let move): "asked for the \(move.rawValue) source of the queue"
    case .moveRequest(let receiver): "asked to move what plays to \(printable(receiver))"
    case .finished(let reason, let error, _): "finished: \(reason.rawValue)\(error.map { " (\($0))" } ?? "")"
    }
}
