import Foundation
import Synchronization

/// Every live movie player, for what they share: the route, and the rule that only one of them plays.
///
/// Thread-safety: its state is in a `Mutex`, and no other lock is taken while it is held (players are called after it
/// is released).
final class MoviePlayerRegistry: Sendable {
    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        weak var playing: MoviePlayerController?
        /// Interrupted players, and the player that interrupted each.
        var interrupted: [(by: ObjectIdentifier, player: Entry)] = []
    }

    private struct Entry {
        weak var player: MoviePlayerController?
    }

    private let state = Mutex(State())

    /// The one registry of the process.
    static let shared = MoviePlayerRegistry()

    func add(_ player: MoviePlayerController) {
        state.withLock { $0.entries[ObjectIdentifier(player)] = Entry(player: player) }
    }

    func remove(_ id: ObjectIdentifier) {
        state.withLock { _ = $0.entries.removeValue(forKey: id) }
    }

    /// The live players.
    var players: [MoviePlayerController] { state.withLock { $0.entries.values.compactMap(\.player) } }

    /// Makes `player` the one that plays; returns the one that played before it, which the caller stops or
    /// interrupts.
    func claim(_ player: MoviePlayerController) -> MoviePlayerController? {
        state.withLock { state in
            defer { state.playing = player }
            return state.playing === player ? nil : state.playing
        }
    }

    /// Makes `player` the one that plays unless another one plays; returns whether it plays.
    func claimIfFree(_ player: MoviePlayerController) -> Bool {
        state.withLock { state in
            guard state.playing == nil || state.playing === player else { return false }
            state.playing = player
            return true
        }
    }

    /// `player` was interrupted by the one that plays now: it hears when that one stops playing.
    func noteInterrupted(_ player: MoviePlayerController) {
        state.withLock { state in
            guard let playing = state.playing else { return }
            state.interrupted.append((by: ObjectIdentifier(playing), player: Entry(player: player)))
        }
    }

    /// `player` stopped playing; returns the players it had interrupted.
    func release(_ player: MoviePlayerController) -> [MoviePlayerController] {
        state.withLock { state in
            if state.playing === player { state.playing = nil }
            let id = ObjectIdentifier(player)
            let ended = state.interrupted.filter { $0.by == id }.compactMap(\.player.player)
            state.interrupted.removeAll { $0.by == id || $0.player.player == nil }
            return ended
        }
    }
}
