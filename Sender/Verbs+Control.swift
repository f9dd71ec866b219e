// cast pause, resume, stop, seek and volume: controls of whatever plays on a receiver.
import CastBase
import CastCommandLine
import CastProtocol
import CastSender
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

func withReceiver<T>(
    _ arguments: ParsedArguments, verb: String, values: Int = 0, valueName: String = "a value",
    _ body: (ReceiverConnection, [String]) throws(CastError) -> T
) throws(CastError) -> T {
    let (name, values) = try receiverAndValues(arguments, verb: verb, values: values, valueName: valueName)
    let connection = try reachCastReceiver(name, arguments)
    defer { connection.close() }
    return try body(connection, values)
}

/// Waits (for `seconds`, a second by default) until the receiver's status satisfies `done`: the engine applies a
/// control on its own threads, and the receiver pushes what changed to watchers (`ReceiverConnection.awaitStatus`).
func awaitStatus(_ connection: ReceiverConnection, for seconds: Double = 1, _ done: (ReceiverStatus) -> Bool)
    throws(CastError) -> ReceiverStatus
{
    try connection.awaitStatus(within: .milliseconds(Int64(seconds * 1000)), done)
}

/// `cast join NAME --to MEMBER`: asks the sender that plays a group on MEMBER to add NAME (castd passes the request
/// on; that sender reaches NAME with its own keys), then waits until NAME plays in the group. MEMBER playing alone
/// becomes a group of the two (its sender starts both again where it was, in step).
func join(_ arguments: ParsedArguments) throws(CastError) {
    guard arguments.positionals.count == 1, let joining = arguments.positionals.first else {
        throw CastError(.usage, "cast join takes one receiver to add, and --to a receiver of the group")
    }
    guard let given = arguments.options["to"] else {
        throw CastError(.usage, "cast join needs --to: a receiver that plays in the group")
    }
    let member = try reachCastReceiver(given, arguments)
    defer { member.close() }
    let group = try member.status()
    let memberName = printable(member.welcome.name)
    guard group.state != .stopped else { throw CastError(.playback, "nothing plays on \(memberName)") }
    let newcomer = try reachCastReceiver(joining, arguments)
    defer { newcomer.close() }
    let name = printable(newcomer.welcome.name)
    guard newcomer.welcome.id != member.welcome.id else {
        throw CastError(.usage, "\(name) and \(memberName) are the same receiver")
    }
    func named(_ one: String, _ other: String) -> Bool { one.matchesIgnoringCase(other) }
    let before = try newcomer.status()
    if before.state != .stopped, before.group?.contains(where: { named($0, memberName) }) == true {
        throw CastError(.usage, "\(name) is in the group already")
    }
    // The group's sender knows receivers by name or id: the id is exact.
    try member.send(.control(PlaybackControl(.join(receiver: newcomer.welcome.id))))
    let after = try awaitStatus(newcomer, for: Double(GroupJoin.wait)) { status in
        status.state == .playing && status.group?.contains { named($0, memberName) } == true
    }
    guard after.state == .playing, after.group != nil else {
        throw CastError(
            .playback,
            "\(name) did not join within \(GroupJoin.wait) s (the cast send of the group says why)")
    }
    report(after, of: newcomer, arguments, text: "\(name) plays in the group of \(memberName)")
}

/// How long `cast join` waits for the receiver to play in the group: the group's sender looks for it (discovery),
/// measures its clock, and starts it where the group will be a second later.
enum GroupJoin {
    static let wait = 15
}

/// `cast pause|resume|stop [NAME]`: acts on whatever plays on the receiver, then reports the state it reached.
func controlVerb(_ action: PlaybackControl.Action) -> (ParsedArguments) throws(CastError) -> Void {
    { arguments throws(CastError) in
        try withReceiver(arguments, verb: action.word) { connection, _ throws(CastError) in
            guard try connection.status().state != .stopped else {
                throw CastError(.playback, "nothing plays on \(printable(connection.welcome.name))")
            }
            try connection.send(.control(PlaybackControl(action)))
            let wanted: PlaybackState = action == .pause ? .paused : action == .resume ? .playing : .stopped
            let after = try awaitStatus(connection) { $0.state == wanted }
            report(after, of: connection, arguments, text: "state: \(after.state.rawValue)")
        }
    }
}

/// `cast next|previous [NAME]`: asks the sender that plays a queue there to move through it (castd passes the
/// request on, as `cast join`'s), then reports where the queue is. Nothing queued there: exit 1.
func skipVerb(_ move: QueueMove) -> (ParsedArguments) throws(CastError) -> Void {
    { arguments throws(CastError) in
        try withReceiver(arguments, verb: move.rawValue) { connection, _ throws(CastError) in
            let before = try connection.status()
            let name = printable(connection.welcome.name)
            // A source of a queue that is still loading reports `stopped`: its place says a queue plays.
            guard let place = before.queue else {
                throw CastError(.playback, "nothing queued on \(name) (cast queue plays a queue)")
            }
            try connection.send(.control(PlaybackControl(.skip(move))))
            // Done when another source plays, the current one starts again (`previous` after a few seconds), or the
            // queue is over (stopped: a new source would have started within the wait).
            let restartFrom = before.position ?? 0
            let after = try awaitStatus(connection, for: 15) { status in
                guard status.state != .stopped else { return false }
                return status.queue != place || status.title != before.title
                    || (move == .previous && (status.position ?? 0) + 1 < restartFrom)
            }
            let text =
                after.state == .stopped
                ? "the queue is over"
                : "queue: \(after.queue.map { "\($0.number)/\($0.count)" } ?? "-") \(printable(after.title ?? ""))"
            report(after, of: connection, arguments, text: text)
        }
    }
}

/// `cast seek [NAME] SEC|+SEC|-SEC [--keyframe]`.
func seek(_ arguments: ParsedArguments) throws(CastError) {
    try withReceiver(arguments, verb: "seek", values: 1, valueName: "SEC") { connection, values throws(CastError) in
        let text = values[0]
        guard let amount = Double(text), amount.isFinite else {
            throw CastError(.usage, "cast seek takes seconds: 90, +10 or -10")
        }
        let before = try connection.status()
        guard before.state != .stopped, let now = before.position else {
            throw CastError(.playback, "nothing plays on \(printable(connection.welcome.name))")
        }
        let relative = text.hasPrefix("+") || text.hasPrefix("-")
        var target = max(0, relative ? now + amount : amount)
        if let duration = before.duration { target = min(target, duration) }
        try connection.send(.control(PlaybackControl(.seek(position: target, exact: !arguments.has("keyframe")))))
        let after = try awaitStatus(connection) { abs(($0.position ?? -100) - target) < 1 }
        report(after, of: connection, arguments, text: "position: \(clock(after.position)) / \(clock(after.duration))")
    }
}

/// `cast volume [NAME] 0..1|up|down|mute|unmute`: up and down step by a tenth (`LiveViewRules.stepped`, as ↑/↓).
func volume(_ arguments: ParsedArguments) throws(CastError) {
    try withReceiver(arguments, verb: "volume", values: 1, valueName: "a level") {
        connection, values throws(CastError) in
        let action: PlaybackControl.Action
        switch values[0] {
        case "mute": action = .mute(true)
        case "unmute": action = .mute(false)
        case "up", "down":
            let level = try connection.status().volume ?? 1
            action = .volume(LiveViewRules.stepped(level, by: values[0] == "up" ? 1 : -1))
        default:
            guard let level = Double(values[0]), level >= 0, level <= 1 else {
                throw CastError(.usage, "cast volume takes a level from 0 to 1, up, down, mute or unmute")
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
        report(
            after, of: connection, arguments,
            text: "volume: \(fixed(after.volume ?? 1, digits: 2))\(after.muted == true ? " (muted)" : "")")
    }
}

/// `cast subtitles [NAME] LANG|off`: the subtitle track in that language, or none, while a film plays.
func subtitles(_ arguments: ParsedArguments) throws(CastError) {
    try chooseTrack(arguments, verb: "subtitles", valueName: "LANG|off", allowsOff: true, example: "eng, en") {
        .subtitles($0)
    }
}

/// `cast audio [NAME] LANG`: the audio track in that language, while a film plays.
func audio(_ arguments: ParsedArguments) throws(CastError) {
    try chooseTrack(arguments, verb: "audio", valueName: "LANG", allowsOff: false, example: "fra, fr") { .audio($0) }
}

/// The track verbs: a language (or "off" where `allowsOff`) checked before anything is sent, then the control while
/// something plays.
private func chooseTrack(
    _ arguments: ParsedArguments, verb: String, valueName: String, allowsOff: Bool, example: String,
    _ action: (String) -> PlaybackControl.Action
) throws(CastError) {
    try withReceiver(arguments, verb: verb, values: 1, valueName: valueName) { connection, values throws(CastError) in
        let language = values[0].lowercased()
        guard (allowsOff && language == "off") || PlayRequest.isLanguageCode(language) else {
            let choices = "an ISO 639 language code of 2 or 3 letters (\(example))\(allowsOff ? " or off" : "")"
            throw CastError(.usage, "cast \(verb) takes \(choices)")
        }
        let status = try connection.status()
        guard status.state != .stopped else {
            throw CastError(.playback, "nothing plays on \(printable(connection.welcome.name))")
        }
        try connection.send(.control(PlaybackControl(action(language))))
        report(status, of: connection, arguments, text: "\(verb): \(language)")
    }
}

/// What a control verb prints once the receiver has applied it: `text`, or with `--json` the receiver's status
/// as `cast status --json` prints it.
func report(_ status: ReceiverStatus, of connection: ReceiverConnection, _ arguments: ParsedArguments, text: String) {
    output(arguments.has("json") ? json(statusObject(status, of: connection)) : text)
}

/// `cast watch NAME [--json]`: follows a receiver's events until interrupted.
