import CastProtocol
import Synchronization

/// The connections that asked to be told every event (`cast watch`): each hears the events and the status of the
/// sessions it did not start (a session's own sender hears them from the session).
///
/// Thread-safety: `Sendable`; the list lives in a `Mutex` and is copied out before anything is sent, so a slow
/// watcher never holds the lock.
final class Watchers: Sendable {
    private let writers = Mutex<[MessageWriter]>([])

    /// Adds a connection to those told every event.
    func add(_ writer: MessageWriter) {
        writers.withLock { $0.append(writer) }
    }

    /// The connection ended: it is told nothing more.
    func remove(_ writer: MessageWriter) {
        writers.withLock { $0.removeAll { $0 === writer } }
    }

    /// Tells every watcher but `session`'s own sender `message` (an event, or the status when a session starts).
    func tell(_ message: Message, except session: PlaybackSession) {
        for watcher in writers.withLock({ $0 }) where !session.belongs(to: watcher) {
            try? watcher.send(message)
        }
    }
}
