import Glibc

/// Runs a system call that reports failure as `-1` + `errno`, retrying `EINTR`, and throws
/// `SecurityError.system` naming `function` otherwise. Not for `close(2)`, which must not be retried on Linux.
@discardableResult
package func systemCall<Result: FixedWidthInteger>(_ function: String, _ body: () -> Result) throws(SecurityError)
    -> Result
{
    while true {
        let result = body()
        if result != -1 { return result }
        let code = errno
        if code == EINTR { continue }
        throw SecurityError(.system, function: function, errno: code, "\(function) failed")
    }
}

/// `strerror(code)` plus the number, e.g. "Connection refused [errno 111]".
package func errnoText(_ code: Int32) -> String {
    "\(String(cString: strerror(code))) [errno \(code)]"
}

/// Closes a descriptor we own, once. `EINTR` is not retried: on Linux the descriptor is already gone.
package func closeDescriptor(_ fd: Int32) {
    _ = Glibc.close(fd)
}

/// Sets or clears `O_NONBLOCK`.
package func setNonBlocking(_ fd: Int32, _ on: Bool) throws {
    let flags = try systemCall("fcntl(F_GETFL)") { fcntl(fd, F_GETFL) }
    let wanted = on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
    if wanted != flags { try systemCall("fcntl(F_SETFL)") { fcntl(fd, F_SETFL, wanted) } }
}

/// Waits until `fd` reports one of `events` (or an error/hang-up, which the next I/O call will surface),
/// or until `deadline` passes, in which case it throws `.timedOut` naming `operation` and the `limit` that
/// set the deadline. `deadline == nil` waits forever.
package func waitUntilReady(
    _ fd: Int32, events: Int16, deadline: ContinuousClock.Instant?, limit: Duration?,
    operation: @autoclosure () -> String
) throws {
    while true {
        var timeoutMS: Int32 = -1
        if let deadline {
            let remaining = deadline - ContinuousClock.now
            if remaining <= .zero {
                throw SecurityError(.timedOut, "\(operation()) timed out" + (limit.map { " after \($0)" } ?? ""))
            }
            timeoutMS = remaining.wholeMillisecondsRoundedUp
        }
        var entry = pollfd(fd: fd, events: events, revents: 0)
        let ready = try systemCall("poll") { poll(&entry, 1, timeoutMS) }
        if ready > 0 { return }
        // ready == 0: the poll timed out; loop to re-check the deadline (poll may wake a little early).
    }
}

extension Duration {
    /// Milliseconds, rounded up so a wait never ends before the deadline, clamped to `Int32` for poll(2).
    package var wholeMillisecondsRoundedUp: Int32 {
        let (seconds, attoseconds) = components
        let attosecondsPerMillisecond: Int64 = 1_000_000_000_000_000
        let millis = seconds.multipliedReportingOverflow(by: 1000)
        if millis.overflow || millis.partialValue > Int64(Int32.max) { return Int32.max }
        var total = millis.partialValue + attoseconds / attosecondsPerMillisecond
        if attoseconds % attosecondsPerMillisecond > 0 { total += 1 }
        return Int32(clamping: max(total, 0))
    }
}
