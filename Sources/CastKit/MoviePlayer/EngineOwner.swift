import Synchronization

/// The owner of an engine player (an `AudioPlayer`, a `MusicPlayerController`), as the engine's role reaches it: the
/// engine is made first, so that the owner holds it in a `let`, and the owner connects itself once it is made. Held
/// weakly, as the engine must not keep its owner alive.
final class EngineOwner<Owner: AnyObject & Sendable>: Sendable {
    private struct Reference {
        weak var owner: Owner?
    }

    private let reference = Mutex(Reference())

    init() {}

    /// Called by the owner at the end of its initializer; until then (and once it is released) `owner` is nil.
    func connect(_ owner: Owner) {
        reference.withLock { $0.owner = owner }
    }

    /// The owner, while it lives and once it connected.
    var owner: Owner? { reference.withLock { $0.owner } }
}
