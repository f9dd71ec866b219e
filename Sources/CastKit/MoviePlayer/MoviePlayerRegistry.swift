import Foundation

/// Every live movie player, for what they share: the route, and the rule that only one of them plays.
final class MoviePlayerRegistry: @unchecked Sendable {
    // Invariant: `entries` and `playing` are read and written only under `lock`, and no other lock is taken while it
    // is held (players are called after it is released).
    private let lock = NSLock()
    private var entries: [ObjectIdentifier: Entry] = [:]
    private weak var playing: MoviePlayerController?
    /// Interrupted players, and the player that interrupted each.
    private var interrupted: [(by: ObjectIdentifier, player: Entry)] = []

    private struct Entry {
        weak var player: MoviePlayerController?
    }

    /// The one registry of the process.
    static let shared = MoviePlayerRegistry()

    func add(_ player: MoviePlayerController) {
        lock.withLock { entries[ObjectIdentifier(player)] = Entry(player: player) }
    }

    func remove(_ id: ObjectIdentifier) {
        lock.withLock { _ = entries.removeValue(forKey: id) }
    }

    /// The live players.
    var players: [MoviePlayerController] { lock.withLock { entries.values.compactMap(\.player) } }

    /// Makes `player` the one that plays; returns the one that played before it, which the caller stops or
    /// interrupts.
    func claim(_ player: MoviePlayerController) -> MoviePlayerController? {
        lock.withLock {
            defer { playing = player }
            return playing === player ? nil : playing
        }
    }

    /// Makes `player` the one that plays unless another one plays; returns whether it plays.
    func claimIfFree(_ player: MoviePlayerController) -> Bool {
        lock.withLock {
            guard playing == nil || playing === player else { return false }
            playing = player
            return true
        }
    }

    /// `player` was interrupted by the one that plays now: it hears when that one stops playing.
    func noteInterrupted(_ player: MoviePlayerController) {
        lock.withLock {
            guard let playing else { return }
            interrupted.append((by: ObjectIdentifier(playing), player: Entry(player: player)))
        }
    }

    /// `player` stopped playing; returns the players it had interrupted.
    func release(_ player: MoviePlayerController) -> [MoviePlayerController] {
        lock.withLock {
            if playing === player { playing = nil }
            let id = ObjectIdentifier(player)
            let ended = interrupted.filter { $0.by == id }.compactMap(\.player.player)
            interrupted.removeAll { $0.by == id || $0.player.player == nil }
            return ended
        }
    }
}
