import Foundation
import Synchronization

/// The receivers that movies and music play on: one selection shared by every player of the process, the counterpart
/// of picking AirPlay devices (one, or several AirPlay 2 speakers at once). A player plays there while its
/// `allowsAirPlay` is true, and locally otherwise.
///
/// The selection is a list: one receiver plays alone; several play as a group, in step (`GroupPlayback`, see
/// docs/multiroom.md). `selected` is the one-receiver spelling of the same selection.
public enum CastRoute {
    private static let current = Mutex<[ReceiverDescription]>([])

    /// The selected receivers, in order (the first leads a group: its events are the player's); empty plays locally.
    /// Setting it moves every loaded movie (at its position, keeping its playback state), or, when one plays on a
    /// group already, adds and removes members while it plays; posts `.castRouteDidChange`. A receiver listed twice
    /// counts once.
    public static var selection: [ReceiverDescription] {
        get { current.withLock { $0 } }
        set {
            var unique: [ReceiverDescription] = []
            for receiver in newValue where !unique.contains(receiver) { unique.append(receiver) }
            let changed = current.withLock { current -> Bool in
                defer { current = unique }
                return current != unique
            }
            guard changed else { return }
            for player in MoviePlayerRegistry.shared.players { player.routeDidChange() }
            NotificationCenter.default.post(name: .castRouteDidChange, object: nil)
        }
    }

    /// The selected receiver: the first of `selection` (a group's leader); nil plays locally. Setting it selects that
    /// one receiver alone (nil: none), as `selection` does.
    public static var selected: ReceiverDescription? {
        get { selection.first }
        set { selection = newValue.map { [$0] } ?? [] }
    }
}
