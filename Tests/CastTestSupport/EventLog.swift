public import Foundation
import Synchronization

/// The events something reported, in order, each with when it came (both clocks), and a way to wait for one.
/// A test target names its own kind: `typealias EventLog = CastTestSupport.EventLog<PlaybackEvent>`.
public final class EventLog<Event: Sendable>: Sendable {
    /// One event and when it came.
    public struct Record: Sendable {
        public var event: Event
        /// On the monotonic clock (for intervals).
        public var time: ContinuousClock.Instant
        /// On the wall clock.
        public var date: Date
    }

    private let records = Mutex<[Record]>([])

    public init() {}

    public func append(_ event: Event) {
        let record = Record(event: event, time: .now, date: Date())
        records.withLock { $0.append(record) }
    }

    /// Every event so far.
    public var all: [Event] { records.withLock { $0.map(\.event) } }
    public var events: [Event] { all }
    /// Every event so far with its wall-clock time.
    public var timed: [(event: Event, time: Date)] { records.withLock { $0.map { ($0.event, $0.date) } } }
    public var count: Int { records.withLock { $0.count } }

    /// The first event at index `start` or later that matches, waiting up to `timeout` (a hang bound) for it.
    public func wait(from start: Int = 0, timeout: Duration = .seconds(10), _ matches: (Event) -> Bool) -> Record? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let found = records.withLock { records in records.dropFirst(start).first { matches($0.event) } }
            if let found { return found }
            if ContinuousClock.now >= deadline { return nil }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }
}
