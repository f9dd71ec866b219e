import Foundation

/// Runs `body` on its own thread; `value(timeout:)` waits for it and returns its result or rethrows its error.
public final class Background<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable invariant: `result` is guarded by `done`'s lock; the thread writes it once.
    private let done = NSCondition()
    private var result: Result<Value, any Error>?

    public init(_ body: @escaping @Sendable () throws -> Value) {
        let thread = Thread { [self] in
            let result = Result { try body() }
            done.withLock {
                self.result = result
                done.broadcast()
            }
        }
        thread.start()
    }

    /// Waits for the thread (at most `timeout` seconds: a hang bound, then `BackgroundTimeout`) and returns its
    /// result.
    public func value(timeout: Double = 10) throws -> Value {
        let deadline = Date().addingTimeInterval(timeout)
        return try done.withLock {
            while result == nil {
                guard done.wait(until: deadline) else { throw BackgroundTimeout() }
            }
            return try result!.get()
        }
    }

    /// Thrown by `value(timeout:)` when the background thread has not finished in time (a hang).
    public struct BackgroundTimeout: Error, CustomStringConvertible {
        public var description: String { "the background work hung" }
    }
}
