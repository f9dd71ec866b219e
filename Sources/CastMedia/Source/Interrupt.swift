import Foundation

/// A one-way flag that asks blocking FFmpeg calls to give up (FFmpeg's interrupt callback reads it).
final class Interrupt: @unchecked Sendable {
    // Invariant: `raised` is only read and written under `lock`.
    private let lock = NSLock()
    private var raised = false

    /// Whether `raise()` was called.
    var isRaised: Bool { lock.withLock { raised } }

    /// Asks every blocking call watching this flag to stop; cannot be undone.
    func raise() { lock.withLock { raised = true } }
}
