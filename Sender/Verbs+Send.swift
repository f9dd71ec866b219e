// cast send and cast queue/play: serve files (or URLs) to a receiver and follow them, with a status line and keys.
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

nonisolated(unsafe) var interruptSource: (any DispatchSourceSignal)?

/// `cast send SOURCE [--loop] [--volume V] …`: one source, played once (or until stopped, with `--loop`).
func send(_ arguments: ParsedArguments) throws(CastError) {
    guard arguments.positionals.count == 1 else {
        throw CastError(.usage, "cast send needs one SOURCE: a file, - for standard input, or an http(s) URL")
    }
    let loop = arguments.has("loop")
    if loop && arguments.positionals[0] == "-" {
        throw CastError(.usage, "--loop needs a file or a URL: standard input cannot be played twice")
    }
    try Playlist(arguments: arguments, sources: arguments.positionals, repeats: loop ? .one : .none, isQueue: false)
        .run()
}

/// `cast queue|play FILE… [--shuffle] [--repeat one|all] …`: a music queue from the command line.
func queue(_ arguments: ParsedArguments) throws(CastError) {
    let sources = arguments.positionals
    guard !sources.isEmpty else { throw CastError(.usage, "cast queue needs one or more files or URLs") }
    guard sources.count <= Playlist.maximumTracks else {
        throw CastError(.usage, "cast queue takes at most \(Playlist.maximumTracks) sources")
    }
    guard !sources.contains("-") else { throw CastError(.usage, "cast queue plays files and URLs, not standard input") }
    for source in sources where !GroupMedia.isURL(source) && !FileManager.default.isReadableFile(atPath: source) {
        throw CastError(.usage, "cannot read \(source)")
    }
    let repeats: PlayingOrder.Repeat
    switch arguments.options["repeat"] {
    case nil: repeats = .none
    case "one": repeats = .one
    case "all": repeats = .all
    case let other?: throw CastError(.usage, "--repeat takes one or all, not '\(other)'")
    }
    try Playlist(arguments: arguments, sources: sources, repeats: repeats, isQueue: true).run()
}

/// Sources played one after another on one receiver (or a group), each followed to its finish, in the order and
/// with the repeats of `PlayingOrder`. What the user asked for (`q`, Ctrl-C, `cast stop` elsewhere) ends it all; the
/// keys (`LiveViewRules`) and `cast next`/`cast previous` from elsewhere (a `skipRequest`) move through a queue.
///
/// Thread-safety: `run` is called on the main thread; keys and SIGINT arrive on other threads and reach the
/// current playback only through `controls`, a Mutex.
final class Playlist: Sendable {
    /// The most sources one queue takes.
    static let maximumTracks = 1000

    let arguments: ParsedArguments
    let sources: [String]
    let repeats: PlayingOrder.Repeat
    /// A queue (`cast queue`): it says which source starts, and moves through its sources (n, p, `cast next`).
    let isQueue: Bool

    /// What the keys and Ctrl-C act on, shared with their threads.
    struct Controls {
        var playback: (any FollowedPlayback)?
        /// What plays, as the receiver last reported it.
        var now: LiveViewRules.Now
        /// The user asked to stop everything.
        var stopping = false
        /// The user asked to move through the queue; the current source's finish is not the end.
        var move: QueueMove?
        /// `cast move` elsewhere: the current source goes on on another receiver (`followMove`).
        var relocation: Relocation?
        /// The receiver's wall-clock time of the last position reported (`now.position`).
        var positionDate: Double?
        /// The group a source that played on one hands on to the next (`GroupPlayback.carryOver`).
        var carried: GroupPlayback.Carried?
        /// The receiver that joined what played on alone here into a group of the two (`adopt`).
        var adopted: ReceiverDescription?
    }
    let controls: Mutex<Controls>

    init(arguments: ParsedArguments, sources: [String], repeats: PlayingOrder.Repeat, isQueue: Bool) {
        self.arguments = arguments
        self.sources = sources
        self.repeats = repeats
        self.isQueue = isQueue
        controls = Mutex(
            Controls(now: LiveViewRules.Now(state: .stopped, position: 0, duration: nil, volume: 1, isQueue: isQueue)))
    }

    func run() throws(CastError) {
        let credentials = try self.credentials()
        let startTime = try number("start", "--start must be a number of seconds ≥ 0") { $0 >= 0 }
        var volume = try number("volume", "--volume must be a level from 0 to 1") { (0...1).contains($0) }
        let audioLanguage = arguments.options["audio-lang"]
        if let audioLanguage, !PlayRequest.isLanguageCode(audioLanguage) {
            throw CastError(.usage, "--audio-lang takes an ISO 639 language code of 2 or 3 letters (fra, fr)")
        }
        let subtitleLanguage = arguments.options["sub-lang"]
        if let subtitleLanguage, subtitleLanguage != "off", !PlayRequest.isLanguageCode(subtitleLanguage) {
            throw CastError(.usage, "--sub-lang takes an ISO 639 language code of 2 or 3 letters (eng, en) or off")
        }
        // Opened (and its size checked) before anything connects: a usage error, exit 2.
        let subtitles = try arguments.options["subtitles"].map { path throws(CastError) in
            try MediaFile.openSubtitles(path)
        }
        if subtitles != nil, sources.contains(where: GroupMedia.isURL) {
            throw CastError(.usage, "--subtitles goes with a file or standard input, not a URL the receiver opens")
        }
        for source in sources where GroupMedia.isURL(source) {
            let split = RemotePlayback.splitCredentials(source)
            if let problem = PlayRequest.problem(withURL: split.url) { throw CastError(.usage, "the URL \(problem)") }
        }
        if credentials != nil && !sources.contains(where: GroupMedia.isURL) {
            throw CastError(.usage, "--user goes only with an http(s) URL")
        }
        let shuffle = arguments.has("shuffle")
        var reshuffle: (@Sendable ([Int]) -> [Int])?
        if shuffle { reshuffle = { (order: [Int]) -> [Int] in order.shuffled() } }
        var playing = PlayingOrder(
            count: sources.count, repeats: repeats, order: reshuffle?(Array(sources.indices)), reshuffle: reshuffle)
        // A first file that cannot be opened is a usage error before any receiver is reached.
        if let first = playing.current.map({ sources[$0] }), !GroupMedia.isURL(first) { _ = try MediaFile.open(first) }
        let firstReceiver: ReceiverDescription
        // The connection made while finding the receiver serves the first source; later ones connect afresh.
        var reached: ReceiverConnection?
        // Several --to: a group (docs/multiroom.md), with every member that can be reached; the others are looked
        // for while it plays.
        let targets = arguments.values("to")
        var members: [ReceiverDescription] = []
        var reachedMembers: [ReachedReceiver]?
        var absent: [String] = []
        if targets.count > 1 {
            try checkGroup(targets, subtitles: subtitles, languages: (audioLanguage, subtitleLanguage))
            let reachedAll: [ReachedReceiver]
            (reachedAll, absent) = try reachMembers(targets)
            members = reachedAll.map(\.receiverDescription)
            reachedMembers = reachedAll
            firstReceiver = members[0]
        } else {
            switch try reachReceiver(arguments.options["to"], arguments, includingSpeakers: true) {
            case .connected(let connection):
                firstReceiver = connection.receiver
                reached = connection
            case .speaker(let speaker):
                firstReceiver = speaker
            }
        }
        // `cast move` elsewhere changes it (`followMove`).
        var receiver = firstReceiver
        defer {
            reached?.close()
            reachedMembers?.forEach { $0.close() }
            controls.withLock { c in
                defer { c.carried = nil }
                return c.carried
            }?.close()
        }
        // A speaker session starts at the level it is given: each source is given the last one.
        let speakers = receiver.kind == .speaker || members.contains { $0.kind == .speaker }
        if receiver.kind == .speaker || members.contains(where: { $0.kind == .speaker }) {
            // An AirPlay speaker: the audio of local files is decoded and streamed from here.
            if sources.contains(where: GroupMedia.isURL) {
                throw CastError(.usage, "an AirPlay speaker plays local files, not URLs (yet)")
            }
            if sources.contains("-") {
                throw CastError(.usage, "an AirPlay speaker plays files: standard input is not supported yet")
            }
        }
        let json = arguments.has("json")
        let live = !json && isatty(1) == 1
        installControls(keys: live && !arguments.has("no-interactive"))

        var failures: [String] = []
        var first = true
        // Where the source a move took to another receiver starts there.
        var movedFrom: Double?
        while let index = playing.current, let place = playing.place {
            let source = sources[index]
            if isQueue && movedFrom == nil {
                output(
                    json
                        ? JSONLine.track(index: place.number, count: place.count, title: source)
                        : "\(live ? "\r\u{1B}[2K" : "")track \(place.number)/\(place.count): \(source)")
            }
            let connection = reached
            reached = nil
            let memberConnections = reachedMembers
            reachedMembers = nil
            let outcome = try play(
                source, on: receiver, over: connection, group: (members, memberConnections, absent),
                credentials: credentials, startTime: movedFrom ?? (first ? startTime : nil), volume: volume,
                languages: (audioLanguage, subtitleLanguage), subtitles: subtitles, place: isQueue ? place : nil,
                json: json, live: live)
            first = false
            // A Cast receiver keeps its level: set it once. A speaker session starts at the level it is given, so
            // each source is given the last one.
            volume = speakers ? controls.withLock { $0.now.volume } : nil
            let (stopping, move, relocation) = controls.withLock { c -> (Bool, QueueMove?, Relocation?) in
                defer { (c.move, c.relocation) = (nil, nil) }
                return (c.stopping, c.move, c.relocation)
            }
            // What played alone here played on into a group: the next source starts on the group it hands on.
            if let adopted = takeAdopted(), members.isEmpty { members = [receiver, adopted] }
            movedFrom = nil
            if let relocation, !stopping, move == nil, outcome == .userExited {
                movedFrom = relocation.position
                guard relocation.keep, members.isEmpty else {
                    // The same source again, on the other receiver, where it was.
                    (receiver, reached) = (relocation.connection.receiver, relocation.connection)
                    continue
                }
                // A group of this receiver and the other from here, both started where it was; the group reaches
                // them both (this receiver's connection went with its playback).
                let other = relocation.connection.receiver
                relocation.connection.close()
                members = [receiver, other]
                writeError(
                    "\(live ? "\r\u{1B}[2K" : "")cast: \(printable(other.name)) joins: \(printable(receiver.name)) and "
                        + "\(printable(other.name)) play as a group from \(clock(relocation.position))\n")
                continue
            }
            relocation?.connection.close()
            switch outcome {
            case .failed(let message):
                failures.append(message)
                guard isQueue else { throw CastError(.playback, message) }
                writeError("cast: \(message); going on with the next\n")
            case .ended: break
            case .userExited where move != nil: break
            case .userExited: return try finish(failures)
            }
            if stopping { return try finish(failures) }
            let ending: PlayingOrder.Ending = move.map { .moved($0) } ?? (outcome == .ended ? .ended : .failed)
            _ = playing.advance(after: ending)
        }
        try finish(failures)
    }

    private func finish(_ failures: [String]) throws(CastError) {
        guard failures.isEmpty else {
            throw CastError(.playback, failures.count == 1 ? failures[0] : "\(failures.count) sources failed to play")
        }
    }

    enum Outcome: Equatable {
        case ended, userExited
        case failed(String)
    }

    /// Ctrl-C stops (everything); on a terminal, keys act on whatever plays now (`LiveViewRules`). Their changes
    /// come back as events.
    private func installControls(keys: Bool) {
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler { [self] in carryOut(.quit) }
        source.resume()
        interruptSource = source
        guard keys else { return }
        _ = KeyReader.start { [self] key in
            carryOut(LiveViewRules.action(for: key, now: controls.withLock { $0.now }))
        }
    }

    private func credentials() throws(CastError) -> (username: String, password: String)? {
        guard let text = arguments.options["user"] else { return nil }
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else {
            throw CastError(.usage, "--user takes USER:PASS")
        }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    private func number(_ option: String, _ message: String, _ valid: (Double) -> Bool) throws(CastError) -> Double? {
        guard let text = arguments.options[option] else { return nil }
        guard let value = Double(text), value.isFinite, valid(value) else { throw CastError(.usage, message) }
        return value
    }
}
