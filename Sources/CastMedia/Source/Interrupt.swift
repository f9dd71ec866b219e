import Synchronization

/// A one-way flag that asks blocking FFmpeg calls to give up (FFmpeg's interrupt callback reads it, often: an atomic
/// load, no lock).
final class Interrupt: Sendable {
    private let raised = Atomic(false)

    /// Whether `raise()` was called.
    var isRaised: Bool { raised.load(ordering: .acquiring) }

    /// Asks every blocking call watching this flag to stop; cannot be undone.
    func raise() { raised.store(true, ordering: .releasing) }
}
