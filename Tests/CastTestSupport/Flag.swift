import Foundation

/// A flag set from any thread and read from another.
public final class Flag: @unchecked Sendable {
    // @unchecked Sendable invariant: `lock` guards `value`.
    private let lock = NSLock()
    private var value = false

    public init() {}

    /// Sets it.
    public func set() { lock.withLock { value = true } }
    /// Sets it; true only for the call that set it.
    public func setOnce() -> Bool {
        lock.withLock {
            defer { value = true }
            return !value
        }
    }
    public var isSet: Bool { lock.withLock { value } }
}
