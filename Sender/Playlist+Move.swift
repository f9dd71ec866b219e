// cast send and cast queue: `cast move` from elsewhere (a `moveRequest`), what plays here started on another receiver;
// `cast move --keep` or `cast join` (a `joinRequest`) to a receiver that plays alone, a group of the two from there.
import CastBase
import CastProtocol
import CastSender
import FoundationEssentials

extension Playlist {
    /// Where a move takes what plays: the receiver reached, the position to start it at there, and whether the
    /// receiver that played keeps playing with it (`keep`: a group of the two from there).
    struct Relocation: Sendable {
        let connection: ReceiverConnection
        var position: Double
        var keep = false
    }

    /// Follows a `moveRequest` (`cast move NAME --to OTHER` elsewhere), or with `keep` a `joinRequest` to what plays
    /// alone here (`cast move --keep`, `cast join`): reaches OTHER by the name or id the request gives
    /// (`Handoff.refusal`: never an address read from the wire), notes where the media is and stops what plays here;
    /// `run` starts the same source on OTHER at that position, or with `keep` on a group of this receiver and OTHER
    /// (both start again there, in step). A request this playback cannot follow (an AirPlay speaker, a receiver not
    /// reached; with `keep`, what a group does not play yet) is said on standard error and playback goes on.
    ///
    /// Called on the thread that follows the playback (`play`), which reads no event while it reaches OTHER.
    func followMove(to other: String, from playback: any FollowedPlayback, keep: Bool, live: Bool) {
        func refuse(_ why: String) {
            let verb = keep ? "add" : "move to"
            writeError("\(live ? "\r\u{1B}[2K" : "")cast: cannot \(verb) \(printable(other)): \(why)\n")
        }
        guard let remote = playback as? RemotePlayback else {
            return refuse("only what plays on one Cast receiver moves (yet)")
        }
        if let why = Handoff.refusal(of: other) { return refuse(why) }
        if keep, let why = groupRefusal() { return refuse(why) }
        guard let connection = reachOther(other, playing: remote, refuse: refuse) else { return }
        let position = controls.withLock { c -> Double in
            Handoff.position(
                seconds: c.now.position, at: c.positionDate ?? 0, playing: c.now.state == .playing,
                now: Date().timeIntervalSince1970)
        }
        let earlier = controls.withLock { c -> Relocation? in
            defer { c.relocation = Relocation(connection: connection, position: position, keep: keep) }
            return c.relocation
        }
        earlier?.connection.close()
        try? playback.control(.stop)
    }

    /// Reaches OTHER for a move or a join (`Handoff.refusal` checked by the caller): a Cast receiver other than the one
    /// that plays `remote`; nil when it cannot be (said with `refuse`).
    private func reachOther(_ other: String, playing remote: RemotePlayback, refuse: (String) -> Void)
        -> ReceiverConnection?
    {
        do throws(CastError) {
            guard
                case .connected(let reached) = try ReceiverConnection.reach(
                    other, browseTimeout: .seconds(2), configDirectory: senderConfigDirectory(),
                    senderName: senderName())
            else {
                refuse("not a Cast receiver")
                return nil
            }
            // The same key: the receiver that plays this.
            guard reached.peerID == nil || reached.peerID != remote.receiverID else {
                reached.close()
                refuse("it plays here already")
                return nil
            }
            return reached
        } catch {
            refuse(error.message)
            return nil
        }
    }

    /// What following a `joinRequest` to what plays alone here came to (`adopt`).
    enum Adoption {
        /// A group of this receiver, which played on, and OTHER: what plays from here.
        case adopted(GroupPlayback)
        /// Refused (said on standard error); playback goes on as it was.
        case refused
        /// This receiver cannot play on into a group (it does not tell its anchor): `followMove(keep: true)`.
        case restart
    }

    /// Follows a `joinRequest` (`cast join OTHER --to NAME`, `cast move NAME --to OTHER --keep`) to what plays alone
    /// here without stopping it, when its receiver tells where its playback is anchored (`features` has `.anchor`):
    /// the playback becomes a group's first member and plays on (`GroupPlayback.adopt`), and OTHER, reached as for a
    /// move, joins that group in step as a receiver joins any playing group. An older receiver: `.restart`.
    ///
    /// Called on the thread that follows the playback (`play`), which reads no event meanwhile; the group reads them
    /// from here, and `play` follows the group.
    func adopt(
        _ other: String, from playback: any FollowedPlayback, source: String, snapshot: PlaybackSnapshot,
        features: Features?, live: Bool
    ) -> Adoption {
        guard let remote = playback as? RemotePlayback, features?.contains(.anchor) == true, !GroupMedia.isURL(source)
        else { return .restart }
        func refuse(_ why: String) {
            writeError("\(live ? "\r\u{1B}[2K" : "")cast: cannot add \(printable(other)): \(why)\n")
        }
        if let why = Handoff.refusal(of: other) ?? groupRefusal() {
            refuse(why)
            return .refused
        }
        let file: MediaFile
        do throws(CastError) {
            file = try MediaFile.open(source)
        } catch {
            refuse(error.message)
            return .refused
        }
        guard let connection = reachOther(other, playing: remote, refuse: refuse) else { return .refused }
        let otherName = connection.receiver
        let group: GroupPlayback
        do throws(CastError) {
            group = try GroupPlayback.adopt(
                remote, playing: snapshot, media: .file(file), configDirectory: senderConfigDirectory(),
                reach: joining(source), onMemberChange: memberChangeSayer(live: live))
        } catch {
            connection.close()
            refuse(error.message)
            return .refused
        }
        controls.withLock { c in c.playback = group }
        do throws(CastError) {
            try group.add(connection)
            let position = controls.withLock { c -> Double in
                Handoff.position(
                    seconds: c.now.position, at: c.positionDate ?? 0, playing: c.now.state == .playing,
                    now: Date().timeIntervalSince1970)
            }
            let name = printable(remote.receiverName)
            writeError(
                "\(live ? "\r\u{1B}[2K" : "")cast: \(printable(otherName.name)) joins: \(name) and "
                    + "\(printable(otherName.name)) play as a group from \(clock(position)) (\(name) plays on)\n")
            controls.withLock { c in c.adopted = otherName }
        } catch {
            refuse(error.message)
        }
        return .adopted(group)
    }

    /// The receiver that joined what played on alone here (`adopt`), once: the next source plays on the group.
    func takeAdopted() -> ReceiverDescription? {
        controls.withLock { c in
            defer { c.adopted = nil }
            return c.adopted
        }
    }

    /// Why what plays alone cannot become a group (what `checkGroup` refuses for several `--to`), nil when it can.
    private func groupRefusal() -> String? {
        if sources.contains(where: GroupMedia.isURL) || sources.contains("-") {
            return "a group plays files, not URLs or standard input (yet)"
        }
        if ["subtitles", "audio-lang", "sub-lang"].contains(where: { arguments.options[$0] != nil }) {
            return "a group takes no --subtitles, --audio-lang or --sub-lang (yet)"
        }
        return nil
    }
}
