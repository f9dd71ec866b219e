#if canImport(Glibc)
    import Glibc
#endif

/// State that threads share and wait on: `Mutex` with a condition variable (a monitor, in Hoare's and Java's sense).
///
/// The one lock idiom of the code base (docs/architecture.md, "Threads"): state no thread waits on lives in a `Mutex`
/// (Synchronization), state a thread waits on (a queue a consumer blocks on, a pause a thread sleeps through) in a
/// `Monitor`. The state is reachable only inside `withLock`, so a class holding its state here needs no
/// `@unchecked Sendable`: this wrapper of two pthread handles is the only one.
///
/// Every `withLock` wakes every waiter when it ends: any change may be the one a waiter waits for, and a waiter
/// checks its own condition again (`withLock(when:)`), so no caller has to remember to signal. `read`, which cannot
/// change the state, wakes nobody. Waits run on
/// CLOCK_MONOTONIC, the clock of the rest of the engine; a timeout is relative, so the lab's test-only clock skew
/// (`MonotonicClock.testSkew`) does not enter it.
///
/// `@unchecked Sendable` invariant: `state` is read and written only while `mutex` is locked (inside `withLock`,
/// where `pthread_cond_timedwait` releases and retakes it); the mutex and the condition are allocated and initialised
/// in `init`, never moved, and destroyed in `deinit`, when no thread can hold them.
public final class Monitor<State>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var state: State

    public init(_ initial: State) {
        state = initial
        mutex = .allocate(capacity: 1)
        condition = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` on the state with the lock held, then wakes every waiter.
    @discardableResult
    public func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        return try body(&state)
    }

    /// Runs `body` on the state with the lock held, and wakes nobody: `body` only reads, so no waiter's condition can
    /// have changed. For what is looked at often (a mode, a serial) while other threads wait on the monitor: a
    /// `withLock` would wake each of them to look again for nothing.
    public func read<Result>(_ body: (State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(state)
    }

    /// Waits until `ready` holds for the state, or `timeout` seconds have passed (nil: no limit), then runs `body`
    /// on the state with the lock still held and wakes every waiter. `body` runs in both cases: it looks at the state
    /// to tell them apart.
    @discardableResult
    public func withLock<Result>(
        when ready: (State) -> Bool, timeout: Double? = nil, _ body: (inout State) throws -> Result
    ) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        if let timeout {
            let deadline = Self.deadline(after: timeout)
            while !ready(state) {
                var until = deadline
                if pthread_cond_timedwait(condition, mutex, &until) == ETIMEDOUT { break }
            }
        } else {
            while !ready(state) { pthread_cond_wait(condition, mutex) }
        }
        return try body(&state)
    }

    /// Waits until `ready` holds for the state, or `timeout` seconds have passed; returns whether it holds.
    @discardableResult
    public func wait(until ready: (State) -> Bool, timeout: Double? = nil) -> Bool {
        withLock(when: ready, timeout: timeout) { ready($0) }
    }

    /// CLOCK_MONOTONIC `seconds` from now (at most a day: longer is no limit in practice, and cannot overflow).
    private static func deadline(after seconds: Double) -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let span = seconds.isFinite ? min(max(seconds, 0), 86_400) : 86_400
        let whole = Int(span)
        var nanoseconds = Int(now.tv_nsec) + Int((span - Double(whole)) * 1e9)
        var secondsPart = Int(now.tv_sec) + whole
        if nanoseconds >= 1_000_000_000 {
            nanoseconds -= 1_000_000_000
            secondsPart += 1
        }
        return timespec(tv_sec: secondsPart, tv_nsec: nanoseconds)
    }
}
