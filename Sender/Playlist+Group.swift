// cast send and cast queue with several --to: a group's members reached, checked and started.
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
    /// A group plays local files and http(s) URLs (each member opens the URL itself) with what every member does
    /// alike: no standard input, subtitle file or track choice yet.
    func checkGroup(_ targets: [String], subtitles: MediaFile?, languages: (String?, String?))
        throws(CastError)
    {
        if sources.contains("-") {
            throw CastError(.usage, "a group (several --to) plays files and URLs, not standard input (yet)")
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
    func reachMembers(_ targets: [String]) throws(CastError) -> (reached: [ReachedReceiver], absent: [String]) {
        let arguments = arguments
        let results = Mutex([Result<ReachedReceiver, CastError>?](repeating: nil, count: targets.count))
        let done = DispatchGroup()
        for (index, target) in targets.enumerated() {
            done.enter()
            startDetachedThread(name: "cast reach \(index)") { @Sendable in
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
    func sayLeftOut(_ name: String, _ error: CastError, lookedFor: Bool) {
        writeError(
            "cast: \(name) is left out of the group: \(error.message)"
                + (lookedFor ? "; it joins when it can be reached\n" : "\n"))
    }

    /// Starts `media` (a file, or a URL each member opens) on every member of a group
    /// (`GroupPlayback.start(_:choosing:…)`). Each member as reached for the
    /// first source; for the next ones, the group the last source played on goes on (`GroupPlayback.carryOver`: the
    /// same connections and clocks, members that joined late included, those still missing still looked for), and
    /// each speaker gets a decoder of its own. Only when none of it is left are the receivers connected afresh.
    func startGroup(
        _ media: GroupMedia, _ source: String,
        group: (members: [ReceiverDescription], reached: [ReachedReceiver]?, absent: [String]), startTime: Double?,
        volume: Double?, queue: QueuePlace?, live: Bool
    ) throws(CastError) -> GroupPlayback {
        let (configDirectory, sender) = (senderConfigDirectory(), senderName())
        let speakerAudio = speakerAudio(source)
        let joining = joining(source)
        let onMemberChange = memberChangeSayer(live: live)
        let carried = controls.withLock { c in
            defer { c.carried = nil }
            return c.carried
        }
        if let carried, !carried.isEmpty, startTime == nil {
            return try GroupPlayback.start(
                media, continuing: carried, speakerAudio: speakerAudio, configDirectory: configDirectory,
                volume: volume, reach: nil, joining: joining, queue: queue, onMemberChange: onMemberChange)
        }
        carried?.close()
        let choices = group.members.enumerated().map { index, member in
            guard case .connected(let connection)? = group.reached?[index] else { return GroupPlayback.Choice(member) }
            return GroupPlayback.Choice(member, connection: connection)
        }
        return try GroupPlayback.start(
            media, choosing: choices, speakerAudio: speakerAudio, configDirectory: configDirectory, senderName: sender,
            startTime: startTime, volume: volume, absent: group.absent, reach: nil, joining: joining, queue: queue,
            leftOut: { member, error in sayLeftOut(member.name, error, lookedFor: true) },
            onMemberChange: onMemberChange
        ).group
    }

    /// What feeds an AirPlay speaker in a group `source`'s audio: a decoder of its own.
    private func speakerAudio(_ source: String) -> @Sendable (ReceiverDescription) throws(CastError) -> any PCMSource {
        { @Sendable (_: ReceiverDescription) throws(CastError) -> any PCMSource in
            do throws(CastError) {
                return try PCMDecoderProcess.open(source)
            } catch {
                throw CastError(.playback, "cannot play the audio of \(source): \(error.message)")
            }
        }
    }

    /// How a group playing `source` reaches a receiver: a lost member by its id (wherever it is now: a restarted castd
    /// may have a new port), a receiver not reached at the start, or one someone asked to add by its name: a Cast
    /// receiver, its key checked as for any send, or an AirPlay speaker, fed the file's audio decoded here.
    func joining(_ source: String) -> GroupPlayback.ReachingAny {
        let (configDirectory, sender) = (senderConfigDirectory(), senderName())
        let speakerAudio = speakerAudio(source)
        return { @Sendable (receiver: String) throws(CastError) -> GroupPlayback.Destination in
            switch try ReceiverConnection.reach(
                receiver, browseTimeout: .seconds(1), includingSpeakers: true, configDirectory: configDirectory,
                senderName: sender)
            {
            case .connected(let connection): return .receiver(connection)
            case .speaker(let speaker): return .speaker(speaker, source: try speakerAudio(speaker))
            }
        }
    }

    /// Says on standard error who joined, rejoined or left a group, and who could not be added.
    func memberChangeSayer(live: Bool) -> @Sendable (GroupPlayback.MemberChange) -> Void {
        { @Sendable (change: GroupPlayback.MemberChange) in
            let line: String
            switch change {
            case .joined(let name): line = "\(name) joined the group"
            case .rejoined(let name): line = "\(name) rejoined the group"
            case .left(let name, let why): line = "\(name) left the group: \(why)"
            case .notAdded(let name, let why): line = "could not add \(name) to the group: \(why)"
            }
            writeError("\(live ? "\r\u{1B}[2K" : "")cast: \(line)\n")
        }
    }
}

extension ReachedReceiver {
    /// What was reached.
    var receiverDescription: ReceiverDescription {
        switch self {
        case .connected(let connection): connection.receiver
        case .speaker(let speaker): speaker
        }
    }

    /// Closes the connection, if one was made (a speaker is connected to only when it plays).
    func close() {
        if case .connected(let connection) = self { connection.close() }
    }
}
