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
        let connection: ReceiverConnection
        do throws(CastError) {
            guard
                case .connected(let reached) = try ReceiverConnection.reach(
                    other, browseTimeout: .seconds(2), configDirectory: senderConfigDirectory(),
                    senderName: senderName())
            else { return refuse("not a Cast receiver") }
            // The same key: the receiver that plays this.
            guard reached.peerID == nil || reached.peerID != remote.receiverID else {
                reached.close()
                return refuse("it plays here already")
            }
            connection = reached
        } catch {
            return refuse(error.message)
        }
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

    /// Why what plays alone cannot become a group (what `checkGroup` refuses for several `--to`), nil when it can.
    private func groupRefusal() -> String? {
        if sources.contains(where: Self.isURL) || sources.contains("-") {
            return "a group plays files, not URLs or standard input (yet)"
        }
        if ["subtitles", "audio-lang", "sub-lang"].contains(where: { arguments.options[$0] != nil }) {
            return "a group takes no --subtitles, --audio-lang or --sub-lang (yet)"
        }
        return nil
    }
}
