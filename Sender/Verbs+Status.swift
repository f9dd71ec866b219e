// cast list and cast status.
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

func list(_ arguments: ParsedArguments) throws(CastError) {
    let receivers = try ReceiverBrowser.receivers(timeout: browseTimeout(arguments), includingSpeakers: true)
    let paired = Set(Pairing.pairedIDs(configDirectory: senderConfigDirectory()))
    let statuses = nowPlaying(on: receivers, paired: paired)
    if arguments.has("json") {
        output(
            json(
                receivers.enumerated().map { index, r -> [String: Any] in
                    var object: [String: Any] = [
                        "name": r.name, "id": r.id, "host": r.host, "port": Int(r.port), "address": r.address,
                        "kind": r.kind.rawValue,
                    ]
                    // Pairing is Cast's: a speaker has neither pairing nor a Cast TXT record.
                    if r.kind == .cast { object["paired"] = paired.contains(r.id) }
                    if let record = r.record { object["txt"] = record.txt }
                    if let status = statuses[index] {
                        var playing: [String: Any] = ["state": status.state.rawValue]
                        if let title = status.title { playing["title"] = title }
                        object["playing"] = playing
                    }
                    return object
                }))
        return
    }
    guard !receivers.isEmpty else {
        output("no receivers in sight")
        return
    }
    func playing(_ status: ReceiverStatus?) -> String {
        guard let status else { return "?" }
        guard let title = status.title else { return "-" }
        return "\(title) (\(status.state.rawValue))"
    }
    let table =
        [["NAME", "KIND", "ID", "ADDRESS", "AUTH", "PAIRED", "PLAYING"]]
        + receivers.enumerated().map { index, r -> [String] in
            r.kind == .speaker
                ? [r.name, "airplay speaker", r.id, r.address, "-", "-", "-"]
                : [
                    r.name, "cast", r.id, r.address, r.record?.auth.rawValue ?? "?",
                    paired.contains(r.id) ? "yes" : "no",
                    playing(statuses[index]),
                ]
        }
    // Names and titles come from the network: each cell is printable, so that every row is one line.
    let rows = table.map { $0.map(printable) }
    let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
    for row in rows {
        output(
            zip(row, widths).map { padded($0, to: $1) }.joined(separator: "  ")
                .trimmed())
    }
}

/// What each receiver plays, asked of all at once; nil where we may not ask (a receiver that needs pairing and
/// is not paired: asking would only be refused, and would log a refusal on it) or it did not answer.
func nowPlaying(on receivers: [ReceiverDescription], paired: Set<String>) -> [ReceiverStatus?] {
    let answers = Mutex([ReceiverStatus?](repeating: nil, count: receivers.count))
    let directory = senderConfigDirectory()
    let name = senderName()
    DispatchQueue.concurrentPerform(iterations: receivers.count) { index in
        let receiver = receivers[index]
        // Only Cast receivers that would answer without a PIN (an AirPlay speaker has no status to ask).
        guard receiver.kind == .cast, receiver.record?.auth == AuthMode.none || paired.contains(receiver.id) else {
            return
        }
        guard let connection = try? ReceiverConnection.open(receiver, configDirectory: directory, senderName: name)
        else { return }
        defer { connection.close() }
        let status = try? connection.status()
        answers.withLock { $0[index] = status }
    }
    return answers.withLock { $0 }
}

func status(_ arguments: ParsedArguments) throws(CastError) {
    try withReceiver(arguments, verb: "status") { connection, _ throws(CastError) in
        let status = try connection.status()
        let measured = receiverClock(connection)
        guard !arguments.has("json") else {
            var object = statusObject(status, of: connection)
            switch measured {
            case .success(let measurement):
                object["clock"] = [
                    "offsetSeconds": measurement.estimate.offset, "roundTripSeconds": measurement.roundTrip,
                    "exchanges": measurement.exchanges,
                ]
            case .failure(let error): object["clockError"] = error.message
            }
            return output(json(object))
        }
        output("name: \(printable(status.name))")
        output("id: \(printable(status.id))")
        output("address: \(connection.receiver.address)")
        output("tls: \(connection.tlsVersion)")
        output("state: \(status.state.rawValue)")
        if let title = status.title {
            // A mirror session's title is castd's own "mirroring from NAME".
            output(title.hasPrefix("mirroring from ") ? printable(title) : "playing: \(printable(title))")
        }
        if let queue = status.queue { output("queue: \(queue.number)/\(queue.count)") }
        if let position = status.position { output("position: \(clock(position)) / \(clock(status.duration))") }
        if let rate = status.linkRate { output("link: \(StatusLine.rate(rate))") }
        if let volume = status.volume {
            output("volume: \(fixed(volume, digits: 2))\(status.muted == true ? " (muted)" : "")")
        }
        for track in status.tracks ?? [] { output("track: \(printable(trackText(track)))") }
        if status.group != nil || status.sync != nil {
            let members = status.group.map { $0.map(printable).joined(separator: " + ") }
            let step = status.sync.map { syncText(offset: $0.offset, trim: $0.trim, limited: $0.limited ?? false) }
            output("group: \([members, step].compactMap { $0 }.joined(separator: "; "))")
        }
        switch measured {
        case .success(let measurement):
            let offset = fixed(measurement.estimate.offset, digits: 6, sign: true)
            output("clock: offset \(offset) s, round trip \(fixed(measurement.roundTrip * 1000, digits: 2)) ms")
        case .failure(let error): output("clock: not measured (\(error.message))")
        }
    }
}

/// The receiver's clock against ours (CLOCK_MONOTONIC, theirs − ours) from 8 exchanges on the status connection.
/// A receiver that cannot tell its time (an older castd refuses the request and closes) still has its status shown.
func receiverClock(_ connection: ReceiverConnection) -> Result<ClockProbe.Measurement, CastError> {
    do {
        guard let measurement = try connection.measureClock(exchanges: 8) else {
            return .failure(CastError(.connectionLost, "no believable time reply"))
        }
        return .success(measurement)
    } catch {
        return .failure(error)
    }
}

/// A receiver's status as one JSON object (`cast status --json`, and every control verb's `--json`).
func statusObject(_ status: ReceiverStatus, of connection: ReceiverConnection) -> [String: Any] {
    var object: [String: Any] = [
        "name": status.name, "id": status.id, "address": connection.receiver.address, "state": status.state.rawValue,
        "tls": connection.tlsVersion,
    ]
    if let title = status.title { object["title"] = title }
    if let position = status.position { object["position"] = position }
    if let duration = status.duration { object["duration"] = duration }
    if let volume = status.volume { object["volume"] = volume }
    if let muted = status.muted { object["muted"] = muted }
    if let load = status.loadState { object["loadState"] = load.wordList }
    if let playable = status.playableDuration { object["playableDuration"] = playable }
    if let rate = status.linkRate { object["linkRate"] = rate }
    if let sync = status.sync {
        object["sync"] = ["offsetSeconds": sync.offset, "trimPPM": sync.trim, "limited": sync.limited ?? false]
    }
    if let group = status.group { object["group"] = group }
    if let queue = status.queue { object["queue"] = ["number": queue.number, "count": queue.count] }
    if let tracks = status.tracks {
        object["tracks"] = tracks.map { track -> [String: Any] in
            var entry: [String: Any] = [
                "index": track.index, "kind": track.kind.rawValue, "codec": track.codec, "selected": track.selected,
            ]
            if let language = track.language { entry["language"] = language }
            if let title = track.title { entry["title"] = title }
            return entry
        }
    }
    return object
}

/// Set by SIGINT: the event loop asks the receiver to stop. Written by the signal source on the
/// main queue's thread, read nowhere else.
