// cast: the Cast command line sender. Arguments and output; the work is CastKit.
import CastCommandLine
import CastKit
import CastProtocol
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One verb of `cast`.
struct Verb {
    let name: String
    let synopsis: String
    let abstract: String
    let options: [OptionSpec]
    let examples: [String]
    let run: (ParsedArguments) throws(CastError) -> Void
}

let jsonOption = OptionSpec("json", help: "print JSON instead of text (events as JSON lines)")
let timeoutOption = OptionSpec("timeout", value: "SEC", help: "how long to look for receivers (default 2)")
let helpOption = OptionSpec("help", help: "show this help")

func output(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func browseTimeout(_ arguments: ParsedArguments) throws(CastError) -> Duration {
    guard let text = arguments.options["timeout"] else { return .seconds(2) }
    guard let seconds = Double(text), seconds > 0, seconds <= 60 else {
        throw CastError(.usage, "--timeout must be a number of seconds from 0 to 60")
    }
    return .milliseconds(Int(seconds * 1000))
}

func senderConfigDirectory() -> String {
    let env = ProcessInfo.processInfo.environment
    return (env["XDG_CONFIG_HOME"] ?? ((env["HOME"] ?? "/tmp") + "/.config")) + "/cast"
}

func senderName() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    let host = gethostname(&buffer, buffer.count) == 0
        ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "unknown"
    return "\(ProcessInfo.processInfo.environment["USER"] ?? "user")@\(host)"
}

func json(_ object: Any) -> String {
    let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
    return String(decoding: data, as: UTF8.self)
}

func list(_ arguments: ParsedArguments) throws(CastError) {
    let receivers = try ReceiverBrowser.receivers(timeout: browseTimeout(arguments))
    let paired = Set(Pairing.pairedIDs(configDirectory: senderConfigDirectory()))
    if arguments.has("json") {
        output(json(receivers.map { r -> [String: Any] in
            var object: [String: Any] = [
                "name": r.name, "id": r.id, "host": r.host, "port": Int(r.port), "address": r.address,
                "paired": paired.contains(r.id),
            ]
            if let record = r.record { object["txt"] = record.txt }
            return object
        }))
        return
    }
    guard !receivers.isEmpty else {
        output("no receivers in sight")
        return
    }
    let rows = [["NAME", "ID", "ADDRESS", "AUTH", "PAIRED"]]
        + receivers.map {
            [$0.name, $0.id, $0.address, $0.record?.auth.rawValue ?? "?", paired.contains($0.id) ? "yes" : "no"]
        }
    let widths = (0..<5).map { column in rows.map { $0[column].count }.max() ?? 0 }
    for row in rows {
        output(zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
            .trimmingCharacters(in: .whitespaces))
    }
}

func status(_ arguments: ParsedArguments) throws(CastError) {
    guard arguments.positionals.count == 1 else { throw CastError(.usage, "cast status needs one receiver NAME") }
    let receiver = try ReceiverBrowser.resolve(arguments.positionals[0], timeout: browseTimeout(arguments))
    let connection = try ReceiverConnection.open(
        receiver, configDirectory: senderConfigDirectory(), senderName: senderName())
    defer { connection.close() }
    let status = try connection.status()
    if arguments.has("json") {
        var object: [String: Any] = [
            "name": status.name, "id": status.id, "address": receiver.address, "state": status.state.rawValue,
            "tls": connection.tlsVersion,
        ]
        if let title = status.title { object["title"] = title }
        if let position = status.position { object["position"] = position }
        if let duration = status.duration { object["duration"] = duration }
        if let volume = status.volume { object["volume"] = volume }
        if let muted = status.muted { object["muted"] = muted }
        output(json(object))
        return
    }
    output("name: \(status.name)")
    output("id: \(status.id)")
    output("address: \(receiver.address)")
    output("tls: \(connection.tlsVersion)")
    output("state: \(status.state.rawValue)")
    if let title = status.title { output("playing: \(title)") }
    if let position = status.position { output("position: \(clock(position)) / \(clock(status.duration))") }
    if let volume = status.volume { output("volume: \(String(format: "%.2f", volume))\(status.muted == true ? " (muted)" : "")") }
}

/// Set by SIGINT: the event loop asks the receiver to stop. Written by the signal source on the
/// main queue's thread, read nowhere else.
nonisolated(unsafe) var interruptSource: (any DispatchSourceSignal)?

func send(_ arguments: ParsedArguments) throws(CastError) {
    guard arguments.positionals.count == 1 else {
        throw CastError(.usage, "cast send needs one SOURCE: a file, - for standard input, or an http(s) URL")
    }
    let sourceArgument = arguments.positionals[0]
    let lowered = sourceArgument.lowercased()
    let isURL = lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
    var credentials: (username: String, password: String)?
    if let text = arguments.options["user"] {
        guard isURL else { throw CastError(.usage, "--user goes only with an http(s) URL") }
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else {
            throw CastError(.usage, "--user takes USER:PASS")
        }
        credentials = (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }
    var startTime: Double?
    if let text = arguments.options["start"] {
        guard let value = Double(text), value.isFinite, value >= 0 else {
            throw CastError(.usage, "--start must be a number of seconds ≥ 0")
        }
        startTime = value
    }
    let playback: RemotePlayback
    let title: String
    if isURL {
        // Checked before anything connects; the URL is sent without its credentials.
        let split = RemotePlayback.splitCredentials(sourceArgument)
        if let problem = PlayRequest.problem(withURL: split.url) { throw CastError(.usage, "the URL \(problem)") }
        title = split.url
        let receiver = try ReceiverBrowser.resolve(arguments.options["to"], timeout: browseTimeout(arguments))
        playback = try RemotePlayback.start(
            url: sourceArgument, username: credentials?.username, password: credentials?.password, on: receiver,
            configDirectory: senderConfigDirectory(), senderName: senderName(), startTime: startTime)
    } else {
        let file = try MediaFile.open(sourceArgument)
        title = file.title
        let receiver = try ReceiverBrowser.resolve(arguments.options["to"], timeout: browseTimeout(arguments))
        playback = try RemotePlayback.start(
            file, on: receiver, configDirectory: senderConfigDirectory(), senderName: senderName(), startTime: startTime)
    }
    defer { playback.close() }

    signal(SIGINT, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
    source.setEventHandler { try? playback.control(.stop) }
    source.resume()
    interruptSource = source

    let json = arguments.has("json")
    let live = !json && isatty(1) == 1
    var line = StatusLine(title: title)
    // Keys act on the receiver; what they change comes back as events like any other.
    let shown = Mutex((state: PlaybackState.stopped, position: 0.0, volume: playback.initialVolume.level))
    if live && !arguments.has("no-interactive") {
        _ = KeyReader.start { key in
            let now = shown.withLock { $0 }
            switch key {
            case .space: try? playback.control(now.state == .paused ? .resume : .pause)
            case .quit: try? playback.control(.stop)
            case .left: try? playback.control(.seek(position: max(0, now.position - 10), exact: false))
            case .right: try? playback.control(.seek(position: now.position + 10, exact: false))
            case .up: try? playback.control(.volume(min(1, (now.volume + 0.1) * 10).rounded() / 10))
            case .down: try? playback.control(.volume(max(0, (now.volume - 0.1) * 10).rounded() / 10))
            }
        }
    }
    while true {
        let event: PlaybackEvent
        do {
            event = try playback.nextEvent()
        } catch {
            if live { output("") }
            throw CastError(.connectionLost, "lost the receiver \(playback.receiverName): \(error.message)")
        }
        if json {
            output(event.jsonLine)
        }
        switch event {
        case .playbackState(let state):
            line.state = state
            shown.withLock { $0.state = state }
            if !json && !live { output("\(state.rawValue)") }
        case .durationAvailable(let duration): line.duration = duration
        case .position(let seconds, _):
            line.position = seconds
            shown.withLock { $0.position = seconds }
        case .volume(let level, let muted):
            line.volume = muted ? 0 : level
            shown.withLock { $0.volume = level }
        case .finished(let reason, let error):
            if live { output("") }
            switch reason {
            case .playbackEnded, .userExited:
                if !json { output("finished: \(reason.rawValue)") }
                return
            case .playbackError:
                throw CastError(.playback, "playback failed on \(playback.receiverName): \(error ?? "unknown error")")
            }
        default: break
        }
        if live {
            FileHandle.standardOutput.write(Data(("\r\u{1B}[2K" + line.render()).utf8))
        }
    }
}

/// Opens a connection to the receiver named by the first positional argument (verbs that take
/// `NAME [VALUE]`), runs `body`, closes.
func withReceiver<T>(
    _ arguments: ParsedArguments, verb: String, values: Int = 0, _ body: (ReceiverConnection) throws(CastError) -> T
) throws(CastError) -> T {
    guard arguments.positionals.count == 1 + values else {
        throw CastError(.usage, "cast \(verb) needs a receiver NAME\(values > 0 ? " and a value" : "")")
    }
    let receiver = try ReceiverBrowser.resolve(arguments.positionals[0], timeout: browseTimeout(arguments))
    let connection = try ReceiverConnection.open(receiver, configDirectory: senderConfigDirectory(), senderName: senderName())
    defer { connection.close() }
    return try body(connection)
}

/// Waits (briefly) until the receiver's status satisfies `done`: the engine applies a control on its own threads.
func awaitStatus(_ connection: ReceiverConnection, _ done: (ReceiverStatus) -> Bool) throws(CastError) -> ReceiverStatus {
    var status = try connection.status()
    for _ in 0..<50 where !done(status) {
        Thread.sleep(forTimeInterval: 0.02)
        status = try connection.status()
    }
    return status
}

/// `cast pause|resume|stop NAME`: acts on whatever plays on the receiver, then reports the state it reached.
func controlVerb(_ action: PlaybackControl.Action) -> (ParsedArguments) throws(CastError) -> Void {
    { arguments throws(CastError) in
        try withReceiver(arguments, verb: action.word) { connection throws(CastError) in
            guard try connection.status().state != .stopped else {
                throw CastError(.playback, "nothing plays on \(connection.welcome.name)")
            }
            try connection.send(.control(PlaybackControl(action)))
            let wanted: PlaybackState = action == .pause ? .paused : action == .resume ? .playing : .stopped
            output("state: \(try awaitStatus(connection) { $0.state == wanted }.state.rawValue)")
        }
    }
}

/// `cast seek NAME SEC|+SEC|-SEC [--keyframe]`.
func seek(_ arguments: ParsedArguments) throws(CastError) {
    try withReceiver(arguments, verb: "seek", values: 1) { connection throws(CastError) in
        let text = arguments.positionals[1]
        guard let amount = Double(text), amount.isFinite else {
            throw CastError(.usage, "cast seek takes seconds: 90, +10 or -10")
        }
        let before = try connection.status()
        guard before.state != .stopped, let now = before.position else {
            throw CastError(.playback, "nothing plays on \(connection.welcome.name)")
        }
        let relative = text.hasPrefix("+") || text.hasPrefix("-")
        var target = max(0, relative ? now + amount : amount)
        if let duration = before.duration { target = min(target, duration) }
        try connection.send(.control(PlaybackControl(.seek(position: target, exact: !arguments.has("keyframe")))))
        let after = try awaitStatus(connection) { abs(($0.position ?? -100) - target) < 1 }
        output("position: \(clock(after.position)) / \(clock(after.duration))")
    }
}

/// `cast volume NAME 0..1|mute|unmute`.
func volume(_ arguments: ParsedArguments) throws(CastError) {
    try withReceiver(arguments, verb: "volume", values: 1) { connection throws(CastError) in
        let text = arguments.positionals[1]
        let action: PlaybackControl.Action
        switch text {
        case "mute": action = .mute(true)
        case "unmute": action = .mute(false)
        default:
            guard let level = Double(text), level >= 0, level <= 1 else {
                throw CastError(.usage, "cast volume takes a level from 0 to 1, mute or unmute")
            }
            action = .volume(level)
        }
        try connection.send(.control(PlaybackControl(action)))
        let after = try awaitStatus(connection) { status in
            switch action {
            case .volume(let level): abs((status.volume ?? -1) - level) < 0.001
            case .mute(let muted): status.muted == muted
            default: true
            }
        }
        output("volume: \(String(format: "%.2f", after.volume ?? 1))\(after.muted == true ? " (muted)" : "")")
    }
}

/// `cast watch NAME [--json]`: follows a receiver's events until interrupted.
func watch(_ arguments: ParsedArguments) throws(CastError) {
    try withReceiver(arguments, verb: "watch") { connection throws(CastError) in
        signal(SIGINT, SIG_IGN)
        // The main thread blocks in receive: the handler runs on another queue.
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler { exit(0) }
        source.resume()
        interruptSource = source
        try connection.send(.watch)
        let json = arguments.has("json")
        while true {
            let message: Message
            do throws(CastError) {
                message = try connection.receive(timeout: nil)
            } catch {
                throw CastError(.connectionLost, "lost \(connection.welcome.name): \(error.message)")
            }
            switch message {
            case .status(let status):
                output(json ? "{\"event\":\"status\",\"state\":\"\(status.state.rawValue)\"}" : "state: \(status.state.rawValue)\(status.title.map { " (\($0))" } ?? "")")
            case .event(let event):
                if json {
                    output(event.jsonLine)
                } else if case .position = event {
                    continue
                } else {
                    output(describe(event))
                }
            default: continue
            }
        }
    }
}

/// One line for a person about an event.
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
    case .volume(let level, let muted): "volume: \(String(format: "%.2f", level))\(muted ? " (muted)" : "")"
    case .rate(let rate): "rate: \(rate)"
    case .finished(let reason, let error): "finished: \(reason.rawValue)\(error.map { " (\($0))" } ?? "")"
    }
}

func pair(_ arguments: ParsedArguments) throws(CastError) {
    guard arguments.positionals.count == 1 else { throw CastError(.usage, "cast pair needs one receiver NAME") }
    let receiver = try ReceiverBrowser.resolve(arguments.positionals[0], timeout: browseTimeout(arguments))
    let given = arguments.options["pin"]
    let paired = try Pairing.pair(receiver, configDirectory: senderConfigDirectory(), senderName: senderName()) {
        if let given { return given }
        let what = receiver.record?.auth == .password ? "the password of" : "the PIN shown on"
        FileHandle.standardError.write(Data("Enter \(what) \(receiver.name): ".utf8))
        return readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces)
    }
    output("paired with \(paired.name) (id \(paired.id))")
}

func unpair(_ arguments: ParsedArguments) throws(CastError) {
    guard arguments.positionals.count == 1 else { throw CastError(.usage, "cast unpair needs one receiver NAME or id") }
    let removed = try Pairing.unpair(arguments.positionals[0], configDirectory: senderConfigDirectory())
    output("forgot \(removed)")
}

let verbs: [Verb] = [
    Verb(
        name: "list", synopsis: "cast list [--json] [--timeout SEC]",
        abstract: "List the receivers on the local network (mDNS).",
        options: [jsonOption, timeoutOption, helpOption], examples: ["cast list", "cast list --json --timeout 5"],
        run: list),
    Verb(
        name: "send", synopsis: "cast send SOURCE [--to NAME|ID|HOST:PORT] [--start SEC] [--user USER:PASS] [--json]",
        abstract: "Play a file (- for standard input, or an http(s) URL the receiver opens itself) on a receiver and follow it to the end.",
        options: [
            OptionSpec("to", value: "RECEIVER", help: "receiver name, id, unique prefix or HOST:PORT"),
            OptionSpec("start", value: "SEC", help: "start this many seconds into the media"),
            OptionSpec("user", value: "USER:PASS", help: "HTTP credentials for a URL (or put them in it: http://USER:PASS@host/…)"),
            OptionSpec("no-interactive", help: "take no keys (on a terminal: space pause, ←/→ seek, ↑/↓ volume, q stop)"),
            jsonOption, timeoutOption, helpOption,
        ],
        examples: [
            "cast send movie.mp4 --to \"Living Room\"", "cast send song.flac --to 192.168.1.20:7100 --json",
            "ffmpeg -i in.mkv -c copy -f mpegts - | cast send - --to kitchen",
            "cast send https://example.com/live/index.m3u8 --to kitchen --user alice:secret",
        ], run: send),
    Verb(
        name: "status", synopsis: "cast status NAME [--json]",
        abstract: "Show what a receiver is doing. NAME is a name, an id, a unique prefix of either, or HOST:PORT.",
        options: [jsonOption, timeoutOption, helpOption],
        examples: ["cast status \"Living Room\"", "cast status 10.0.0.5:7100 --json"], run: status),
    Verb(
        name: "pair", synopsis: "cast pair NAME [--pin PIN]",
        abstract: "Pair with a receiver using the PIN it shows (or its password); later connections need no PIN.",
        options: [OptionSpec("pin", value: "PIN", help: "the PIN (or password) instead of a prompt"), timeoutOption, helpOption],
        examples: ["cast pair \"Living Room\"", "cast pair kitchen --pin 0427"], run: pair),
    Verb(
        name: "unpair", synopsis: "cast unpair NAME", abstract: "Forget a paired receiver (by name or id).",
        options: [helpOption], examples: ["cast unpair \"Living Room\""], run: unpair),
    Verb(
        name: "seek", synopsis: "cast seek NAME SEC|+SEC|-SEC [--keyframe]",
        abstract: "Move what plays to a time, absolute or relative; exact unless --keyframe.",
        options: [OptionSpec("keyframe", help: "land on the nearest preceding key frame (faster)"), timeoutOption, helpOption],
        examples: ["cast seek \"Living Room\" 90", "cast seek kitchen +10"], run: seek),
    Verb(
        name: "volume", synopsis: "cast volume NAME 0..1|mute|unmute",
        abstract: "Set a receiver's output volume, or mute it.",
        options: [timeoutOption, helpOption], examples: ["cast volume \"Living Room\" 0.4", "cast volume kitchen mute"],
        run: volume),
    Verb(
        name: "watch", synopsis: "cast watch NAME [--json]",
        abstract: "Follow everything that happens on a receiver until interrupted.",
        options: [jsonOption, timeoutOption, helpOption], examples: ["cast watch \"Living Room\"", "cast watch kitchen --json"],
        run: watch),
    Verb(
        name: "pause", synopsis: "cast pause NAME", abstract: "Pause what plays on a receiver.",
        options: [timeoutOption, helpOption], examples: ["cast pause \"Living Room\""], run: controlVerb(.pause)),
    Verb(
        name: "resume", synopsis: "cast resume NAME", abstract: "Resume what is paused on a receiver.",
        options: [timeoutOption, helpOption], examples: ["cast resume \"Living Room\""], run: controlVerb(.resume)),
    Verb(
        name: "stop", synopsis: "cast stop NAME", abstract: "Stop what plays on a receiver (its sender sees userExited).",
        options: [timeoutOption, helpOption], examples: ["cast stop \"Living Room\""], run: controlVerb(.stop)),
]

let toolUsage = """
    usage: cast VERB [options]

    Send media to Cast receivers and control them.

    verbs:
    \(verbs.map { "  " + $0.name.padding(toLength: 10, withPad: " ", startingAt: 0) + $0.abstract }.joined(separator: "\n"))

    Run 'cast VERB --help' for a verb's options.
    exit codes: 0 done, 1 playback error, 2 usage, 3 no such receiver, 4 not authorised, 5 connection lost,
    6 receiver busy
    """

func help(for verb: Verb) -> String {
    """
    usage: \(verb.synopsis)

    \(verb.abstract)

    options:
    \(verb.options.map { "  --\($0.name)\($0.value.map { " " + $0 } ?? "")".padding(toLength: 20, withPad: " ", startingAt: 0) + $0.help }.joined(separator: "\n"))

    examples:
    \(verb.examples.map { "  " + $0 }.joined(separator: "\n"))
    """
}

@MainActor func main() -> Int32 {
    signal(SIGPIPE, SIG_IGN)
    let arguments = Array(CommandLine.arguments.dropFirst())
    guard let first = arguments.first, first != "--help", first != "help", first != "-h" else {
        output(toolUsage)
        return arguments.isEmpty ? 2 : 0
    }
    guard let verb = verbs.first(where: { $0.name == first }) else {
        FileHandle.standardError.write(Data(
            "cast: unknown verb '\(first)'\(suggestion(for: first, among: verbs.map(\.name))) (see cast --help)\n".utf8))
        return 2
    }
    do {
        let parsed = try parseArguments(arguments.dropFirst(), options: verb.options)
        if parsed.has("help") {
            output(help(for: verb))
            return 0
        }
        try verb.run(parsed)
        return 0
    } catch let error as UsageError {
        FileHandle.standardError.write(Data("cast \(verb.name): \(error.message) (see cast \(verb.name) --help)\n".utf8))
        return 2
    } catch let error as CastError {
        FileHandle.standardError.write(Data("cast \(verb.name): \(error.message)\n".utf8))
        return error.exitCode
    } catch {
        FileHandle.standardError.write(Data("cast \(verb.name): \(error)\n".utf8))
        return 1
    }
}

exit(main())
