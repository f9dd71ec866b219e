// cast send and cast queue: one source played and followed to its finish, with the status line and the keys' effects.
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

extension Playlist {
    /// Plays one source to its finish.
    func play(
        _ source: String, on receiver: ReceiverDescription, over connection: ReceiverConnection?,
        group: (members: [ReceiverDescription], reached: [ReachedReceiver]?, absent: [String]),
        credentials: (username: String, password: String)?, startTime: Double?, volume: Double?,
        languages: (audio: String?, subtitles: String?), subtitles: MediaFile?, place: (number: Int, count: Int)?,
        json: Bool, live: Bool
    ) throws(CastError) -> Outcome {
        let queue = place.map { QueuePlace(number: $0.number, count: $0.count) }
        let (started, title) = try start(
            source, on: receiver, over: connection, group: group, credentials: credentials, startTime: startTime,
            volume: volume, languages: languages, subtitles: subtitles, queue: queue, live: live)
        // What is followed: what started, or the group it played on into (`adopt`).
        var playback = started
        defer {
            controls.withLock { $0.playback = nil }
            playback.close()
        }
        let stopAtOnce = controls.withLock { c -> Bool in
            c.playback = playback
            c.now.volume = playback.startVolume.level
            (c.now.state, c.now.position, c.now.duration) = (.stopped, 0, playback.knownDuration)
            c.positionDate = nil
            // A stop, or a move asked for between two sources, acts on this one: a move must not wait for its end.
            return c.stopping || c.move != nil
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
            case .position(let seconds, let at):
                controls.withLock { ($0.now.position, $0.positionDate) = (seconds, at) }
            case .durationAvailable(let seconds):
                controls.withLock { $0.now.duration = seconds }
            case .volume(let level, _):
                controls.withLock { $0.now.volume = level }
            case .skipRequest(let move):
                // `cast next` or `cast previous` elsewhere: as the key.
                let now = controls.withLock { $0.now }
                carryOut(move == .next ? LiveViewRules.action(for: .next, now: now) : LiveViewRules.previous(now))
            case .moveRequest(let other):
                followMove(to: other, from: playback, keep: false, live: live)
            case .joinRequest(let other):
                // Only what plays alone sees one (a group's rules take theirs): it becomes a group of two, playing on
                // when its receiver can (`adopt`), else started again with the other.
                switch adopt(
                    other, from: playback, source: source, snapshot: line.playback,
                    features: receiver.record?.features, live: live)
                {
                case .adopted(let group): playback = group
                case .refused: break
                case .restart: followMove(to: other, from: playback, keep: true, live: live)
                }
            case .finished(_, _, .receiverShutdown?):
                // Not a playback failure: the receiver went away (exit 5, as for a lost connection).
                if live { output("") }
                throw CastError(.connectionLost, "the receiver \(playback.routeName) is shutting down")
            case .finished(let reason, let error, _):
                if live { output("") }
                switch reason {
                case .playbackEnded, .userExited:
                    // A group goes on to the next source with its members (one group across a queue).
                    if let carried = playback.carriedGroup() { controls.withLock { $0.carried = carried } }
                    // Stopped here for a move: it goes on elsewhere, not finished.
                    let moving = reason == .userExited && controls.withLock { $0.relocation != nil }
                    if !json && !moving { output("finished: \(reason.rawValue)") }
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

    /// Starts one source: on a group, an AirPlay speaker, or a Cast receiver (a URL it opens, or a file served from
    /// here); what plays and its title.
    private func start(
        _ source: String, on receiver: ReceiverDescription, over connection: ReceiverConnection?,
        group: (members: [ReceiverDescription], reached: [ReachedReceiver]?, absent: [String]),
        credentials: (username: String, password: String)?, startTime: Double?, volume: Double?,
        languages: (audio: String?, subtitles: String?), subtitles: MediaFile?, queue: QueuePlace?, live: Bool
    ) throws(CastError) -> (any FollowedPlayback, String) {
        if !group.members.isEmpty {
            let (media, title): (GroupMedia, String)
            if GroupMedia.isURL(source) {
                // Each member opens it, given what `--user` says (or the URL's own userinfo, which goes out of it).
                media = .url(source) { _ in credentials }
                title = RemotePlayback.splitCredentials(source).url
            } else {
                let file = try MediaFile.open(source)
                (media, title) = (.file(file), file.title)
            }
            let playback = try startGroup(
                media, source, group: group, startTime: startTime, volume: volume, queue: queue, live: live)
            return (playback, title)
        }
        let playback: any FollowedPlayback
        let title: String
        if receiver.kind == .speaker {
            title = try MediaFile.open(source).title  // missing or unreadable: a usage error, before connecting
            let speaker = try SpeakerPlayback.start(path: source, on: receiver, volume: volume)
            if let startTime, startTime > 0 { try speaker.control(.seek(position: startTime, exact: true)) }
            playback = speaker
        } else if GroupMedia.isURL(source) {
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
        return (playback, title)
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
    /// Once it finished: what a group hands on to the next source; nil for anything else.
    func carriedGroup() -> GroupPlayback.Carried?
}

extension FollowedPlayback {
    func carriedGroup() -> GroupPlayback.Carried? { nil }
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
    func carriedGroup() -> GroupPlayback.Carried? { carryOver() }
}

extension Playlist {
    /// Carries out what a key (or a request from elsewhere) asks for on whatever plays now.
    func carryOut(_ action: LiveViewRules.Action) {
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
}
