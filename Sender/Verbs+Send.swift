// cast send and cast queue/play: serve files (or URLs) to a receiver and follow them, with a status line and keys.
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
    for source in sources where !Playlist.isURL(source) && !FileManager.default.isReadableFile(atPath: source) {
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
    private struct Controls {
        var playback: (any FollowedPlayback)?
        /// What plays, as the receiver last reported it.
        var now: LiveViewRules.Now
        /// The user asked to stop everything.
        var stopping = false
        /// The user asked to move through the queue; the current source's finish is not the end.
        var move: QueueMove?
    }
    private let controls: Mutex<Controls>

    init(arguments: ParsedArguments, sources: [String], repeats: PlayingOrder.Repeat, isQueue: Bool) {
        self.arguments = arguments
        self.sources = sources
        self.repeats = repeats
        self.isQueue = isQueue
        controls = Mutex(
            Controls(now: LiveViewRules.Now(state: .stopped, position: 0, duration: nil, volume: 1, isQueue: isQueue)))
    }

    static func isURL(_ source: String) -> Bool {
        let lowered = source.lowercased()
        return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
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
        if subtitles != nil, sources.contains(where: Self.isURL) {
            throw CastError(.usage, "--subtitles goes with a file or standard input, not a URL the receiver opens")
        }
        for source in sources where Self.isURL(source) {
            let split = RemotePlayback.splitCredentials(source)
            if let problem = PlayRequest.problem(withURL: split.url) { throw CastError(.usage, "the URL \(problem)") }
        }
        if credentials != nil && !sources.contains(where: Self.isURL) {
            throw CastError(.usage, "--user goes only with an http(s) URL")
        }
        let shuffle = arguments.has("shuffle")
        var reshuffle: (@Sendable ([Int]) -> [Int])?
        if shuffle { reshuffle = { (order: [Int]) -> [Int] in order.shuffled() } }
        var playing = PlayingOrder(
            count: sources.count, repeats: repeats, order: reshuffle?(Array(sources.indices)), reshuffle: reshuffle)
        // A first file that cannot be opened is a usage error before any receiver is reached.
        if let first = playing.current.map({ sources[$0] }), !Self.isURL(first) { _ = try MediaFile.open(first) }
        let receiver: ReceiverDescription
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
            receiver = members[0]
        } else {
            switch try reachReceiver(arguments.options["to"], arguments, includingSpeakers: true) {
            case .connected(let connection):
                receiver = connection.receiver
                reached = connection
            case .speaker(let speaker):
                receiver = speaker
            }
        }
        defer {
            reached?.close()
            reachedMembers?.forEach { $0.close() }
        }
        // A speaker session starts at the level it is given: each source is given the last one.
        let speakers = receiver.kind == .speaker || members.contains { $0.kind == .speaker }
        if receiver.kind == .speaker {
            // An AirPlay speaker: the audio of local files is decoded and streamed from here.
            if sources.contains(where: Self.isURL) {
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
        while let index = playing.current, let place = playing.place {
            let source = sources[index]
            if isQueue {
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
                credentials: credentials, startTime: first ? startTime : nil, volume: volume,
                languages: (audioLanguage, subtitleLanguage), subtitles: subtitles, place: isQueue ? place : nil,
                json: json, live: live)
            first = false
            // A Cast receiver keeps its level: set it once. A speaker session starts at the level it is given, so
            // each source is given the last one.
            volume = speakers ? controls.withLock { $0.now.volume } : nil
            let (stopping, move) = controls.withLock { c -> (Bool, QueueMove?) in
                defer { c.move = nil }
                return (c.stopping, c.move)
            }
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

    /// A group plays local files with what every member does alike: no URL, standard input, subtitle file or
    /// track choice yet.
    private func checkGroup(_ targets: [String], subtitles: MediaFile?, languages: (String?, String?))
        throws(CastError)
    {
        if sources.contains(where: Self.isURL) || sources.contains("-") {
            throw CastError(.usage, "a group (several --to) plays files, not URLs or standard input (yet)")
        }
        if subtitles != nil || languages.0 != nil || languages.1 != nil {
            throw CastError(.usage, "a group (several --to) takes no --subtitles, --audio-lang or --sub-lang (yet)")
        }
        guard Set(targets).count == targets.count else { throw CastError(.usage, "a receiver is named twice in --to") }
    }

    /// Reaches every member of a group at once: Cast receivers (connected) and AirPlay speakers. One that cannot be
    /// reached is left out with a word on standard error, and when it was not found or did not answer it is looked
    /// for while the group plays (`absent`: what the user named, aliases resolved). None reached is the first one's
    /// failure; a usage error (two names for one receiver, a malformed address) is the command's.
    private func reachMembers(_ targets: [String]) throws(CastError) -> (reached: [ReachedReceiver], absent: [String]) {
        let arguments = arguments
        let results = Mutex([Result<ReachedReceiver, CastError>?](repeating: nil, count: targets.count))
        let done = DispatchGroup()
        for (index, target) in targets.enumerated() {
            done.enter()
            startDetachedThread(name: "cast reach \(index)") {
                let result = Result { () throws(CastError) in
                    try reachReceiver(target, arguments, includingSpeakers: true)
                }
                results.withLock { $0[index] = result }
                done.leave()
            }
        }
        done.wait()
        var reached: [ReachedReceiver] = []
        var absent: [String] = []
        var failures: [(target: String, error: CastError)] = []
        for (target, result) in zip(targets, results.withLock { $0 }) {
            switch result {
            case .success(let receiver)?: reached.append(receiver)
            case .failure(let error)?: failures.append((target, error))
            case nil: preconditionFailure("every reach ends with a result")
            }
        }
        do throws(CastError) {
            if let misuse = failures.first(where: { $0.error.kind == .usage }) { throw misuse.error }
            guard !reached.isEmpty else { throw failures[0].error }
            let connections = reached.compactMap { if case .connected(let connection) = $0 { connection } else { nil } }
            let speakers = reached.compactMap { if case .speaker(let speaker) = $0 { speaker.address } else { nil } }
            guard Set(connections.compactMap(\.peerID)).count == connections.count,
                Set(speakers).count == speakers.count
            else {
                throw CastError(.usage, "two --to name the same receiver")
            }
        } catch {
            reached.forEach { $0.close() }
            throw error
        }
        for (target, error) in failures {
            let lookedFor = [CastError.Kind.noSuchReceiver, .connectionLost, .discovery].contains(error.kind)
            sayLeftOut(printable(target), error, lookedFor: lookedFor)
            if lookedFor { absent.append((try? settings().resolve(target)) ?? target) }
        }
        return (reached, absent)
    }

    /// Says on standard error that a member is left out of the group, and whether it is looked for while it plays.
    private func sayLeftOut(_ name: String, _ error: CastError, lookedFor: Bool) {
        writeError(
            "cast: \(name) is left out of the group: \(error.message)"
                + (lookedFor ? "; it joins when it can be reached\n" : "\n"))
    }

    private func finish(_ failures: [String]) throws(CastError) {
        guard failures.isEmpty else {
            throw CastError(.playback, failures.count == 1 ? failures[0] : "\(failures.count) sources failed to play")
        }
    }

    private enum Outcome: Equatable {
        case ended, userExited
        case failed(String)
    }

    /// Plays one source to its finish.
    private func play(
        _ source: String, on receiver: ReceiverDescription, over connection: ReceiverConnection?,
        group: (members: [ReceiverDescription], reached: [ReachedReceiver]?, absent: [String]),
        credentials: (username: String, password: String)?, startTime: Double?, volume: Double?,
        languages: (audio: String?, subtitles: String?), subtitles: MediaFile?, place: (number: Int, count: Int)?,
        json: Bool, live: Bool
    ) throws(CastError) -> Outcome {
        let playback: any FollowedPlayback
        let title: String
        let queue = place.map { QueuePlace(number: $0.number, count: $0.count) }
        if !group.members.isEmpty {
            let file = try MediaFile.open(source)
            title = file.title
            // Each member as reached for the first source; for the next ones, receivers are connected afresh (one that
            // cannot be is left out, and looked for as those not reached at first are), and each speaker gets a
            // decoder of its own.
            var destinations: [GroupPlayback.Destination] = []
            var absent = group.absent
            var unreachable: CastError?
            do throws(CastError) {
                for (index, member) in group.members.enumerated() {
                    if member.kind == .speaker {
                        do {
                            destinations.append(.speaker(member, source: try PCMDecoderProcess.open(source)))
                        } catch {
                            throw CastError(.playback, "cannot play the audio of \(source): \(error.message)")
                        }
                    } else if case .connected(let connection)? = group.reached?[index] {
                        destinations.append(.receiver(connection))
                    } else {
                        do throws(CastError) {
                            destinations.append(
                                .receiver(
                                    try ReceiverConnection.open(
                                        member, configDirectory: senderConfigDirectory(), senderName: senderName())))
                        } catch {
                            sayLeftOut(member.name, error, lookedFor: true)
                            unreachable = unreachable ?? error
                            absent.append(member.id.isEmpty ? member.name : member.id)
                        }
                    }
                }
                if destinations.isEmpty, let unreachable { throw unreachable }
            } catch {
                for case .receiver(let connection) in destinations { connection.close() }
                group.reached?.forEach { $0.close() }  // closing twice is harmless
                throw error
            }
            let live = live
            let (configDirectory, sender) = (senderConfigDirectory(), senderName())
            playback = try GroupPlayback.start(
                file, to: destinations, configDirectory: configDirectory, startTime: startTime, volume: volume,
                absent: absent,
                reach: { receiver throws(CastError) in
                    // A lost member by its id (wherever it is now: a restarted castd may have a new port), or a
                    // receiver someone asked to add by its name; its key is checked as for any send.
                    let reached = try ReceiverConnection.reach(
                        receiver, browseTimeout: .seconds(1), configDirectory: configDirectory, senderName: sender)
                    guard case .connected(let connection) = reached else {
                        throw CastError(.usage, "\(printable(receiver)) is not a Cast receiver")
                    }
                    return connection
                },
                onMemberChange: { change in
                    let line: String
                    switch change {
                    case .joined(let name): line = "\(name) joined the group"
                    case .rejoined(let name): line = "\(name) rejoined the group"
                    case .left(let name, let why): line = "\(name) left the group: \(why)"
                    case .notAdded(let name, let why): line = "could not add \(name) to the group: \(why)"
                    }
                    writeError("\(live ? "\r\u{1B}[2K" : "")cast: \(line)\n")
                })
        } else if receiver.kind == .speaker {
            title = try MediaFile.open(source).title  // missing or unreadable: a usage error, before connecting
            let speaker = try SpeakerPlayback.start(path: source, on: receiver, volume: volume)
            if let startTime, startTime > 0 { try speaker.control(.seek(position: startTime, exact: true)) }
            playback = speaker
        } else if Self.isURL(source) {
            title = RemotePlayback.splitCredentials(source).url
            let (username, password) = (credentials?.username, credentials?.password)
            if let connection {
                playback = try RemotePlayback.start(
                    url: source, username: username, password: password, over: connection, startTime: startTime,
                    volume: volume, audioLanguage: languages.audio, subtitleLanguage: languages.subtitles, queue: queue)
            } else {
                playback = try RemotePlayback.start(
                    url: source, username: username, password: password, on: receiver,
                    configDirectory: senderConfigDirectory(), senderName: senderName(), startTime: startTime,
                    volume: volume, audioLanguage: languages.audio, subtitleLanguage: languages.subtitles, queue: queue)
            }
        } else {
            let file = try MediaFile.open(source)
            title = file.title
            if let connection {
                playback = try RemotePlayback.start(
                    file, over: connection, configDirectory: senderConfigDirectory(), startTime: startTime,
                    volume: volume, audioLanguage: languages.audio, subtitleLanguage: languages.subtitles,
                    subtitles: subtitles, queue: queue)
            } else {
                playback = try RemotePlayback.start(
                    file, on: receiver, configDirectory: senderConfigDirectory(), senderName: senderName(),
                    startTime: startTime, volume: volume, audioLanguage: languages.audio,
                    subtitleLanguage: languages.subtitles, subtitles: subtitles, queue: queue)
            }
        }
        defer {
            controls.withLock { $0.playback = nil }
            playback.close()
        }
        let stopAtOnce = controls.withLock { c -> Bool in
            c.playback = playback
            c.now.volume = playback.startVolume.level
            (c.now.state, c.now.position, c.now.duration) = (.stopped, 0, playback.knownDuration)
            return c.stopping
        }
        if stopAtOnce { try? playback.control(.stop) }

        var line = StatusLine(title: title, place: place)
        line.playback.volume = (playback.startVolume.level, playback.startVolume.muted)
        line.playback.duration = playback.knownDuration
        while true {
            let event: PlaybackEvent
            do {
                event = try playback.nextEvent()
            } catch {
                if live { output("") }
                throw CastError(.connectionLost, playback.lostMessage(error))
            }
            if json { output(event.jsonLine) }
            line.playback.apply(event)
            switch event {
            case .playbackState(let state):
                controls.withLock { $0.now.state = state }
                if !json && !live { output("\(state.rawValue)") }
            case .position(let seconds, _):
                controls.withLock { $0.now.position = seconds }
            case .durationAvailable(let seconds):
                controls.withLock { $0.now.duration = seconds }
            case .volume(let level, _):
                controls.withLock { $0.now.volume = level }
            case .skipRequest(let move):
                // `cast next` or `cast previous` elsewhere: as the key.
                let now = controls.withLock { $0.now }
                carryOut(move == .next ? LiveViewRules.action(for: .next, now: now) : LiveViewRules.previous(now))
            case .finished(_, _, .receiverShutdown?):
                // Not a playback failure: the receiver went away (exit 5, as for a lost connection).
                if live { output("") }
                throw CastError(.connectionLost, "the receiver \(playback.routeName) is shutting down")
            case .finished(let reason, let error, _):
                if live { output("") }
                switch reason {
                case .playbackEnded, .userExited:
                    if !json { output("finished: \(reason.rawValue)") }
                    return reason == .playbackEnded ? .ended : .userExited
                case .playbackError:
                    let failure = "playback failed on \(playback.routeName): \(printable(error ?? "unknown error"))"
                    return .failed(isQueue ? "\(title): \(failure)" : failure)
                }
            default: break
            }
            if live {
                write("\r\u{1B}[2K" + line.render(), to: STDOUT_FILENO)
            }
        }
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

    /// Carries out what a key (or a request from elsewhere) asks for on whatever plays now.
    private func carryOut(_ action: LiveViewRules.Action) {
        let playback = controls.withLock { c -> (any FollowedPlayback)? in
            switch action {
            case .quit: c.stopping = true
            case .skip(let move): c.move = move
            case .control, .ignore: break
            }
            return c.playback
        }
        switch action {
        case .control(let control): try? playback?.control(control)
        case .quit, .skip: try? playback?.control(.stop)
        case .ignore: break
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

/// Lines `cast` itself adds to the receiver's events under `--json`.
enum JSONLine {
    /// `{"event":"track","index":2,"count":5,"title":"b.flac"}`: a queue moves on to its next source.
    static func track(index: Int, count: Int, title: String) -> String {
        json(["event": "track", "index": index, "count": count, "title": title])
    }
}

/// What a Playlist follows: `SenderPlayback` (a Cast receiver, an AirPlay speaker, a group) with what `cast` shows.
protocol FollowedPlayback: SenderPlayback {
    /// The name of where it plays.
    var routeName: String { get }
    /// The level playback starts at.
    var startVolume: (level: Double, muted: Bool) { get }
    /// The duration when known before the first event.
    var knownDuration: Double? { get }
    /// The message when the connection broke.
    func lostMessage(_ error: CastError) -> String
}

extension RemotePlayback: FollowedPlayback {
    var routeName: String { printable(receiverName) }
    var startVolume: (level: Double, muted: Bool) { initialVolume }
    var knownDuration: Double? { nil }
    func lostMessage(_ error: CastError) -> String { "lost the receiver \(routeName): \(error.message)" }
}

extension SpeakerPlayback: FollowedPlayback {
    var routeName: String { printable(speakerName) }
    var startVolume: (level: Double, muted: Bool) { (initialVolume, false) }
    var knownDuration: Double? { duration }
    func lostMessage(_ error: CastError) -> String { error.message }
}

extension GroupPlayback: FollowedPlayback {
    var routeName: String { memberNames.joined(separator: " + ") }
    var startVolume: (level: Double, muted: Bool) { initialVolume }
    var knownDuration: Double? { nil }
    func lostMessage(_ error: CastError) -> String { "lost every receiver of the group: \(error.message)" }
}

extension ReachedReceiver {
    /// What was reached.
    fileprivate var receiverDescription: ReceiverDescription {
        switch self {
        case .connected(let connection): connection.receiver
        case .speaker(let speaker): speaker
        }
    }

    /// Closes the connection, if one was made (a speaker is connected to only when it plays).
    fileprivate func close() {
        if case .connected(let connection) = self { connection.close() }
    }
}
