import CastMedia
import CastProtocol
import CastSender
import Dispatch

/// Where a loaded movie plays: the engine on this machine or a receiver. A movie player holds one at a time and
/// replaces it to move playback.
///
/// Driven in the wire's vocabulary (`PlaybackDriver`): `start()` opens the movie and plays it from the start time given
/// at creation; seeks are exact; `volume` on a receiver is the receiver's level; `scaling` fits a local window (a
/// receiver keeps its own); `stop` ends playback, and what it reports afterwards may be ignored.
///
/// Contract (the player calls these under its lock): no method blocks or reports synchronously; reports arrive in
/// order, on a thread of the playback's own.
protocol MoviePlayback: PlaybackDriver {
    /// The receiver it plays on (a group's leader); nil for local playback.
    var route: ReceiverDescription? { get }
    /// Every receiver it plays on: one, a group's members, or none for local playback.
    var receivers: [ReceiverDescription] { get }
    /// Whether each receiver keeps a level of its own (a group's members, as each AirPlay 2 speaker has its slider);
    /// otherwise the one receiver's level is the playback's (`.volume`).
    var keepsLevelPerReceiver: Bool { get }
    /// Sets the level (0...1) of `receiver` alone, when the playback keeps one per receiver.
    func setVolume(_ level: Double, of receiver: ReceiverDescription)
    /// The level `receiver` last reported as its own; nil when it reported none or the playback keeps none.
    func volume(of receiver: ReceiverDescription) -> Double?
    /// Makes `receivers` the ones it plays on while it plays (a group: the new ones join in step, the others leave);
    /// only a playback that `RouteRules` regroups (a group) is asked.
    func regroup(to receivers: [ReceiverDescription])
    /// A playback of `receivers` (a group that keeps this playback's receiver) that takes over what this one plays
    /// without stopping it, its events reported to `report`; started by the player in place of this one, which
    /// reports nothing more. nil when this playback cannot play on into a group (the default: here, an AirPlay speaker,
    /// a URL the receiver opens itself): the player moves instead.
    func adopted(
        into receivers: [ReceiverDescription], playing: Bool, report: @escaping @Sendable (MoviePlaybackReport) -> Void
    ) -> (any MoviePlayback)?
}

extension MoviePlayback {
    var receivers: [ReceiverDescription] { route.map { [$0] } ?? [] }
    var keepsLevelPerReceiver: Bool { false }
    func setVolume(_ level: Double, of receiver: ReceiverDescription) {}
    func volume(of receiver: ReceiverDescription) -> Double? { nil }
    func regroup(to receivers: [ReceiverDescription]) {
        preconditionFailure("the route rules regroup a group playback only")
    }
    func adopted(
        into receivers: [ReceiverDescription], playing: Bool, report: @escaping @Sendable (MoviePlaybackReport) -> Void
    ) -> (any MoviePlayback)? { nil }
}

/// What a playback reports to its player.
enum MoviePlaybackReport: Sendable {
    /// An event of the engine, local or on the receiver.
    case event(PlaybackEvent)
    /// The receiver could not be reached or refused the movie: playback must come back here.
    case routeLost(CastError)
    /// The connection to a receiver that was playing broke without a finish (castd killed or restarting, its host
    /// gone): the player may retry the same receiver, identified by `receiverID` (the key it presented), before it
    /// brings playback back here. nil when the route has no pinned key to insist on (an AirPlay speaker).
    case connectionBroken(CastError, receiverID: String?)
    /// A group played its file to the end: what the next file on the same receivers starts with (its members'
    /// connections and clocks, `GroupPlayback.carryOver`), sent before the finish; the player hands it to the next
    /// group playback on the same selection, or closes it.
    case groupCarried(CarriedGroup)
    /// What played alone could not be made a group without stopping (`MoviePlayback.adopted`): the receiver was lost
    /// meanwhile, or did not hand its session over. The player starts the group afresh (a move).
    case adoptionFailed(CastError)
}

/// A group's members as a file ends, for the next file on the same selection (`MoviePlaybackReport.groupCarried`).
struct CarriedGroup: Sendable {
    let carried: GroupPlayback.Carried
    /// The receivers selected, in order, and each member's receiver by its welcome's id.
    let selection: [ReceiverDescription]
    let byID: [String: ReceiverDescription]

    /// Closes the connections carried, on a thread of its own (the caller may hold a lock).
    func close() {
        let carried = carried
        DispatchQueue.global().async { carried.close() }
    }
}
