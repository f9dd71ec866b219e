import Foundation

/// How a movie player retries a receiver whose connection broke without a finish (castd restarting, killed, its
/// host gone for a moment): every `interval` until `window` has passed since the break, then playback comes here.
struct ReconnectPolicy: Sendable {
    var interval: DispatchTimeInterval = .milliseconds(500)
    var window: DispatchTimeInterval = .seconds(5)
}

/// A reconnection in progress: the receiver that was lost, the key it presented, and when to give up on it.
struct Reconnection {
    var route: ReceiverDescription
    var receiverID: String
    var deadline: DispatchTime
}

// Everything here runs under the player's lock.
extension MoviePlayerController {
    /// The connection to the receiver broke without a finish. A movie player keeps its route and retries the same
    /// receiver (same address, same key), `.interrupted` at its position meanwhile; an engine player (audio, music)
    /// and a route without a key fall back here at once, as for a lost route.
    func connectionBroken(receiverID: String?) {
        guard role == nil, let receiverID, let route = state.playback?.route else { return routeLost() }
        // A reconnected session that broke before its clock ran is a failed attempt: the next waits its turn.
        if state.reconnection != nil { return reconnectionFailed() }
        state.reconnection = Reconnection(
            route: route, receiverID: receiverID, deadline: .now() + state.reconnectPolicy.window)
        // The position stands where the receiver was until a playback's clock runs again.
        setPlaybackState(.interrupted)
        reconnect()
    }

    /// An attempt failed: try again after the interval while the window lasts, else play on here.
    func reconnectionFailed() {
        guard let reconnection = state.reconnection else { return routeLost() }
        let next = DispatchTime.now() + state.reconnectPolicy.interval
        guard next < reconnection.deadline else {
            state.reconnection = nil
            return routeLost()
        }
        let generation = state.generation
        DispatchQueue.global().asyncAfter(deadline: next) { [weak self] in
            guard let self else { return }
            lock.withLock {
                // Anything that replaced the playback meanwhile (stop, a move, a new movie) ends the retries.
                guard generation == state.generation, state.reconnection != nil else { return }
                reconnect()
            }
        }
    }

    /// One attempt: a new session on the same receiver at the position, in the intended state.
    private func reconnect() {
        guard let reconnection = state.reconnection else { return }
        startPlayback(at: currentTime(), on: reconnection.route, pinnedID: reconnection.receiverID)
    }
}
