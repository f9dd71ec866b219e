import CastBase
import CastMedia
import CastProtocol
import CastSender
import Foundation
import Synchronization

/// A movie (or a song) playing on several receivers in step: CastSender's `GroupPlayback` driven as a `MoviePlayback`,
/// as `RemoteMoviePlayback` drives one receiver. The route of a player whose selection lists several receivers
/// (`CastRoute.selection`).
///
/// The group is started on a serial queue (connecting and the clock exchange block), and every control goes through
/// that queue after it, in order: a control given before the group is ready waits for it. The group's events (its
/// leader's, the first member still in it) are read on a thread of their own.
///
/// What the group does on its way to a start (each member loads paused, then all resume at one instant; a seek or a
/// resume is "pause, seek every member, resume at one instant") is not the player's business: while a start the
/// player asked for is on its way (`settling`), the members' transient states (paused, seeking) and positions are not
/// reported; their `playing` ends it.
///
/// Members: `regroup(to:)` adds the receivers not in the group yet (each joins in step while the group plays,
/// `GroupPlayback.add`) and removes the ones no longer selected (`GroupPlayback.remove`). A member's volume is its own
/// (`setVolume(_:of:)`); `.volume` sets every member's.
///
/// Adoption: a group made of what plays alone on one receiver (`init(adopting:)`, RouteRules' `.adopt`) takes that
/// playback's session over (`RemoteMoviePlayback.handOver`) and makes it its first member without stopping it
/// (`GroupPlayback.adopt`); the other receivers join in step as in `regroup(to:)`. When the session is not handed over,
/// or the adoption throws, it reports `adoptionFailed` and the player starts the group afresh.
///
/// Thread-safety: what changes is in `state`, a `Mutex` under which nothing else is called (the group is driven, and
/// reports are made, after it is released). The group is started, controlled and regrouped on `work` only.
final class GroupMoviePlayback: MoviePlayback, Sendable {
    private let path: String
    private let configuration: CastKitConfiguration
    private let startTime: Double
    private let autoplay: Bool
    /// The group the last file played on, when it goes on with this one (a queue keeps one group).
    private let carried: CarriedGroup?
    /// What plays alone and becomes this group's first member, playing on.
    private let adopting: RemoteMoviePlayback?
    private let report: @Sendable (MoviePlaybackReport) -> Void
    private let work = DispatchQueue(label: "CastKit.GroupMoviePlayback")
    private let state: Mutex<State>

    private struct State {
        var group: GroupPlayback?
        /// The receivers asked for, in order; the members are the ones among them still in the group.
        var selection: [ReceiverDescription]
        /// Each member's receiver, by the id its welcome gave.
        var byID: [String: ReceiverDescription] = [:]
        /// The AirPlay speakers the group started with (a group takes none later).
        var speakers: [ReceiverDescription] = []
        var stopped = false
        /// What the player asked for last: playing or paused.
        var playing: Bool
        /// A start the player asked for is on its way: transient states and positions are not reported.
        var settling: Bool
    }

    init(
        path: String, receivers: [ReceiverDescription], configuration: CastKitConfiguration, startTime: Double,
        autoplay: Bool = true, carried: CarriedGroup? = nil, report: @escaping @Sendable (MoviePlaybackReport) -> Void
    ) {
        precondition(!receivers.isEmpty, "a group has at least one receiver")
        self.path = path
        self.carried = carried
        adopting = nil
        self.configuration = configuration
        self.startTime = startTime
        self.autoplay = autoplay
        self.report = report
        state = Mutex(State(selection: receivers, playing: autoplay, settling: autoplay))
    }

    /// A group of `receivers` made of what plays on `adopting` (one of them), which plays on; `playing`: what the
    /// player intends.
    init(
        path: String, receivers: [ReceiverDescription], configuration: CastKitConfiguration,
        adopting: RemoteMoviePlayback, playing: Bool, report: @escaping @Sendable (MoviePlaybackReport) -> Void
    ) {
        precondition(!receivers.isEmpty, "a group has at least one receiver")
        self.path = path
        self.configuration = configuration
        self.adopting = adopting
        carried = nil
        startTime = 0
        autoplay = playing
        self.report = report
        // Nothing starts: what plays goes on, and its state is already the player's.
        state = Mutex(State(selection: receivers, playing: playing, settling: false))
    }

    /// The receiver that leads: the first member still in the group (before it started: the first asked for).
    var route: ReceiverDescription? { receivers.first }

    /// The receivers in the group now, in the order they were selected (then joined).
    var receivers: [ReceiverDescription] {
        let (group, selection, byID, speakers) = state.withLock { ($0.group, $0.selection, $0.byID, $0.speakers) }
        guard let group else { return selection }
        // A speaker has no id the group knows it by: it counts while it is selected.
        return group.receiverIDs.compactMap { byID[$0] } + speakers
    }

    func start() {
        work.async { [self] in
            let (receivers, stopped) = state.withLock { ($0.selection, $0.stopped) }
            guard !stopped else {
                carried?.close()
                return
            }
            let group: GroupPlayback
            let byID: [String: ReceiverDescription]
            let reach = { @Sendable [weak self] (receiver: String) throws(CastError) -> GroupPlayback.Destination in
                guard let self else { throw CastError(.connectionLost, "the player is gone") }
                return try reconnect(receiver)
            }
            if let adopting { return adopt(adopting, reach: reach) }
            do throws(CastError) {
                if let carried, !carried.carried.isEmpty {
                    // The same members go on with this file: their connections and clocks as they are.
                    byID = carried.byID
                    group = try GroupPlayback.start(
                        try media(), continuing: carried.carried,
                        speakerAudio: { _ throws(CastError) in try speakerAudio() },
                        configDirectory: configuration.configDirectory, autoplay: autoplay,
                        reach: nil, joining: reach, onMemberChange: { _ in })
                } else {
                    carried?.close()
                    // The one way to start a group (as `cast` does): a receiver not reached is left out and looked for.
                    (group, byID) = try GroupPlayback.start(
                        try media(), choosing: receivers.map { GroupPlayback.Choice($0) },
                        speakerAudio: { _ throws(CastError) in try speakerAudio() },
                        configDirectory: configuration.configDirectory, senderName: configuration.senderName,
                        startTime: startTime > 0 ? startTime : nil, autoplay: autoplay,
                        reach: nil, joining: reach, onMemberChange: { _ in })
                }
            } catch {
                report(.routeLost(error))
                return
            }
            run(group, byID: byID, speakers: receivers.filter { $0.kind == .speaker })
        }
    }

    /// Keeps `group` and reads its events; false when the player stopped meanwhile (the group is stopped then).
    @discardableResult
    private func run(
        _ group: GroupPlayback, byID: [String: ReceiverDescription], speakers: [ReceiverDescription]
    ) -> Bool {
        let kept = state.withLock { state in
            if !state.stopped {
                state.group = group
                state.byID = byID
                state.speakers = speakers
            }
            return !state.stopped
        }
        guard kept else {
            try? group.control(.stop)
            group.close()
            return false
        }
        startDetachedThread(name: "CastKit.group") { [self] in readEvents(from: group) }
        return true
    }

    /// Makes a group of what plays on `playback`, which plays on, then adds the other receivers selected (on `work`).
    private func adopt(_ playback: RemoteMoviePlayback, reach: @escaping GroupPlayback.ReachingAny) {
        let media: GroupMedia
        do throws(CastError) {
            media = try self.media()
        } catch {
            // What plays alone is stopped for the player's move (it is no longer the player's).
            playback.perform(.stop)
            return report(.adoptionFailed(error))
        }
        guard let (session, snapshot) = playback.handOver() else {
            playback.perform(.stop)
            return report(.adoptionFailed(CastError(.connectionLost, "the receiver playing alone did not hand over")))
        }
        let group: GroupPlayback
        do throws(CastError) {
            group = try GroupPlayback.adopt(
                session, playing: snapshot, media: media, configDirectory: configuration.configDirectory,
                reach: reach, onMemberChange: { _ in })
        } catch {
            return report(.adoptionFailed(error))
        }
        // Its one member so far is the receiver that played alone.
        var byID: [String: ReceiverDescription] = [:]
        for id in group.receiverIDs { byID[id] = playback.route }
        guard run(group, byID: byID, speakers: []) else { return }
        join(state.withLock { $0.selection }, group)
    }

    /// What the group plays: an http(s) URL each Cast member opens itself (given the credentials stored for its server
    /// only when this sender paired it, as a single receiver is), or a file served to each.
    private func media() throws(CastError) -> GroupMedia {
        guard GroupMedia.isURL(path), let url = URL(string: path) else { return .file(try MediaFile.open(path)) }
        let configuration = configuration
        return .url(path) { connection in
            let pinned =
                connection.peerID.map {
                    Pairing.pairedIDs(configDirectory: configuration.configDirectory).contains($0)
                } ?? false
            guard
                StoredCredentials.mayGo(
                    toReceiver: pinned, for: url, overPlainHTTP: configuration.storedCredentialsOverPlainHTTP),
                let stored = StoredCredentials.lookup(for: url)
            else { return nil }
            return (stored.user, stored.password)
        }
    }

    /// The audio of the file (or the URL) decoded here, for an AirPlay speaker of the group.
    private func speakerAudio() throws(CastError) -> any PCMSource {
        do {
            return EngineAudio(try PCMReader(path: path, sampleRate: 44_100, channels: PCMPipeMessage.channels))
        } catch {
            throw CastError(.playback, "cannot play the audio of \(path): \(error)")
        }
    }

    /// A member looked for again (`GroupPlayback`'s rejoin) by its id: at the address it was selected with,
    /// insisting on the key it presented; or one not reached at the start, by its id or name as selected; or an AirPlay
    /// speaker of the selection, lost or not reached, by its name: at its address, fed the file's audio from here
    /// (never a Cast connection to a speaker's port).
    private func reconnect(_ receiver: String) throws(CastError) -> GroupPlayback.Destination {
        let (byID, selection) = state.withLock { ($0.byID, $0.selection) }
        if var member = byID[receiver] {
            member.id = receiver
            return .receiver(
                try ReceiverConnection.open(
                    member, configDirectory: configuration.configDirectory, senderName: configuration.senderName))
        }
        if let speaker = selection.first(where: { $0.kind == .speaker && ($0.requested ?? $0.name) == receiver }) {
            return .speaker(speaker, source: try speakerAudio())
        }
        guard let chosen = selection.first(where: { $0.kind == .cast && ($0.id == receiver || $0.name == receiver) })
        else {
            throw CastError(.noSuchReceiver, "\(receiver) is not a receiver of this group")
        }
        let connection = try ReceiverConnection.open(
            chosen, configDirectory: configuration.configDirectory, senderName: configuration.senderName)
        state.withLock { $0.byID[connection.welcome.id] = chosen }
        return .receiver(connection)
    }

    /// Reports the group's events until its finish; the last member lost is a lost route.
    private func readEvents(from group: GroupPlayback) {
        while true {
            let event: PlaybackEvent
            do {
                event = try group.nextEvent()
            } catch {
                if !state.withLock({ $0.stopped }) { report(.routeLost(error)) }
                group.close()
                return
            }
            let shown = state.withLock { state -> Bool in
                switch event {
                case .playbackState(.playing):
                    state.settling = false
                    return true
                case .playbackState(.paused), .playbackState(.seekingForward), .playbackState(.seekingBackward),
                    .position:
                    return !state.settling
                default:
                    return true
                }
            }
            if case .finished(let reason, _, _) = event {
                if reason == .playbackEnded {
                    // Before the finish: the player may start the next file on the same group as it hears it.
                    let (selection, byID) = state.withLock { ($0.selection, $0.byID) }
                    report(.groupCarried(CarriedGroup(carried: group.carryOver(), selection: selection, byID: byID)))
                }
                if shown { report(.event(event)) }
                group.close()
                return
            }
            if shown { report(.event(event)) }
        }
    }

    /// Carries out `action` on the whole group, after its start; `scaling` is each receiver's own setting, and the
    /// group's own schedule (`resumeAt`, `align`) and joins are not the player's.
    func perform(_ action: PlaybackControl.Action) {
        switch action {
        case .stop: return stop()
        case .scaling, .join, .skip, .move, .resumeAt, .align, .anchor: return
        case .pause:
            state.withLock { state in
                state.playing = false
                state.settling = false
            }
        case .resume:
            state.withLock { state in
                state.playing = true
                state.settling = true
            }
        case .seek, .rate:
            // Playing, a seek or a rate change restarts every member at one instant; paused, the members seek where
            // they are, as one receiver does.
            state.withLock { state in if state.playing { state.settling = true } }
        case .volume, .mute, .accessLog, .subtitles, .audio: break
        }
        work.async { [self] in
            guard let group = state.withLock({ $0.stopped ? nil : $0.group }) else { return }
            try? group.control(action)
        }
    }

    /// Makes the members `receivers`: the new ones join while the group plays (in step, at its place), the ones no
    /// longer listed leave; the others play on undisturbed. A receiver that cannot join stays out.
    func regroup(to receivers: [ReceiverDescription]) {
        state.withLock { $0.selection = receivers }
        work.async { [self] in
            guard let group = state.withLock({ $0.stopped ? nil : $0.group }) else { return }
            join(receivers, group)
        }
    }

    /// Makes `group`'s members `receivers` (on `work`): joins first, so that the group is never empty.
    private func join(_ receivers: [ReceiverDescription], _ group: GroupPlayback) {
        let byID = state.withLock { $0.byID }
        let present = group.receiverIDs
        for receiver in receivers where !present.contains(where: { byID[$0] == receiver }) {
            guard receiver.kind != .speaker else { continue }
            do throws(CastError) {
                let connection = try ReceiverConnection.open(
                    receiver, configDirectory: configuration.configDirectory, senderName: configuration.senderName)
                state.withLock { $0.byID[connection.welcome.id] = receiver }
                try group.add(connection)
            } catch {
                continue
            }
        }
        for id in group.receiverIDs {
            guard let receiver = state.withLock({ $0.byID[id] }), !receivers.contains(receiver) else { continue }
            try? group.remove(receiverID: id)
        }
    }

    /// Each member keeps its own level.
    var keepsLevelPerReceiver: Bool { true }

    /// Sets the level of one member (`receiver`, as selected) alone, 0...1.
    func setVolume(_ level: Double, of receiver: ReceiverDescription) {
        work.async { [self] in
            let (group, byID) = state.withLock { ($0.stopped ? nil : $0.group, $0.byID) }
            guard let group, let id = byID.first(where: { $0.value == receiver })?.key else { return }
            try? group.control(.volume(level), receiverID: id)
        }
    }

    /// The level `receiver` (as selected) last reported, while it is a member.
    func volume(of receiver: ReceiverDescription) -> Double? {
        let (group, byID) = state.withLock { ($0.group, $0.byID) }
        guard let group, let id = byID.first(where: { $0.value == receiver })?.key else { return nil }
        return group.volume(ofReceiver: id)?.level
    }

    private func stop() {
        state.withLock { $0.stopped = true }
        work.async { [self] in
            // Before an adoption (after one failed), what plays alone is still its own.
            guard let group = state.withLock({ $0.group }) else {
                adopting?.perform(.stop)
                return
            }
            try? group.control(.stop)
            group.close()
        }
    }
}
