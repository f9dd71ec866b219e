import Foundation
import Synchronization

/// The receiver that movies play on: one selection shared by every player of the process, the counterpart of
/// picking an AirPlay device. A player plays there while its `allowsAirPlay` is true, and locally otherwise.
public enum CastRoute {
    private static let selection = Mutex<ReceiverDescription?>(nil)

    /// The selected receiver; nil plays locally. Setting it moves every loaded movie (at its position, keeping its
    /// playback state) and posts `.castRouteDidChange`.
    public static var selected: ReceiverDescription? {
        get { selection.withLock { $0 } }
        set {
            let changed = selection.withLock { current -> Bool in
                defer { current = newValue }
                return current != newValue
            }
            guard changed else { return }
            for player in MoviePlayerRegistry.shared.players { player.routeDidChange() }
            NotificationCenter.default.post(name: .castRouteDidChange, object: nil)
        }
    }
}
