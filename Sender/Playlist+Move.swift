// cast send and cast queue: `cast move` from elsewhere (a `moveRequest`), what plays here started on another receiver.
import CastBase
import CastProtocol
import CastSender
import FoundationEssentials

extension Playlist {
    /// Where a move takes what plays: the receiver reached, and the position to start it at there.
    struct Relocation: Sendable {
        let connection: ReceiverConnection
        var position: Double
    }

    /// Follows a `moveRequest` (`cast move NAME --to OTHER` elsewhere): reaches OTHER by the name or id the request
    /// gives (`Handoff.refusal`: never an address read from the wire), notes where the media is and stops what plays
    /// here; `run` starts the same source on OTHER at that position. A request this playback cannot follow (a group,
    /// an AirPlay speaker, a receiver not reached) is said on standard error and playback goes on.
    ///
    /// Called on the thread that follows the playback (`play`), which reads no event while it reaches OTHER.
    func followMove(to other: String, from playback: any FollowedPlayback, live: Bool) {
        func refuse(_ why: String) {
            writeError("\(live ? "\r\u{1B}[2K" : "")cast: cannot move to \(printable(other)): \(why)\n")
        }
        guard playback is RemotePlayback else { return refuse("only what plays on one Cast receiver moves (yet)") }
        if let why = Handoff.refusal(of: other) { return refuse(why) }
        let connection: ReceiverConnection
        do throws(CastError) {
            guard
                case .connected(let reached) = try ReceiverConnection.reach(
                    other, browseTimeout: .seconds(2), configDirectory: senderConfigDirectory(),
                    senderName: senderName())
            else { return refuse("not a Cast receiver") }
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
            defer { c.relocation = Relocation(connection: connection, position: position) }
            return c.relocation
        }
        earlier?.connection.close()
        try? playback.control(.stop)
    }
}
