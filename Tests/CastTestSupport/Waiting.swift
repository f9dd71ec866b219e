import Foundation

/// Polls `condition` every 20 ms until it holds (true) or `timeout` seconds have passed (false, after one last look).
/// A hang bound, not a measure: the condition is the event the test waits for.
@discardableResult
public func waitUntil(timeout: Double, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: 0.02)
    }
    return try condition()
}
