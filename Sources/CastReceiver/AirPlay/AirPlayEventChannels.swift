import CastAirPlay
import CastBase
import CastProtocol
import Synchronization

/// The AirPlay clients' reverse connections (`POST /reverse`), each waiting for the events of one session ID: castd
/// publishes a session's events here as they happen, and each connection's own thread sends them in order
/// (`AirPlayConnection`), so that a slow or silent client never holds up the session that publishes.
///
/// Thread-safety: `Sendable`; the list lives in a `Mutex`, each channel's queue in a `Monitor` its thread waits on.
final class AirPlayEventChannels: Sendable {
    /// One reverse connection's queue of events not sent yet.
    final class Channel: Sendable {
        let sessionID: String
        let queue = Monitor<(events: [AirPlayEvent], closed: Bool)>(([], false))

        init(sessionID: String) { self.sessionID = sessionID }

        /// Adds `event`; when the client is more than `Channel.backlog` behind, the oldest go (a client that does not
        /// answer is closed by its write timeout soon anyway).
        func add(_ event: AirPlayEvent) {
            queue.withLock { state in
                state.events.append(event)
                if state.events.count > Self.backlog { state.events.removeFirst(state.events.count - Self.backlog) }
            }
        }

        /// The next events to send, waiting at most `timeout` seconds (nil: no limit); empty after a timeout or once
        /// closed.
        func next(timeout: Double?) -> [AirPlayEvent] {
            queue.withLock(when: { !$0.events.isEmpty || $0.closed }, timeout: timeout) { state in
                defer { state.events.removeAll() }
                return state.events
            }
        }

        /// Ends the wait of the channel's thread (castd stops).
        func close() { queue.withLock { $0.closed = true } }

        var isClosed: Bool { queue.read { $0.closed } }

        /// The most events waiting for one client.
        static let backlog = 32
    }

    private let channels = Mutex<[Channel]>([])

    /// A channel for the events of session `sessionID`, told them until `remove`.
    func open(sessionID: String) -> Channel {
        let channel = Channel(sessionID: sessionID)
        channels.withLock { $0.append(channel) }
        return channel
    }

    /// The connection ended: its channel is told nothing more.
    func remove(_ channel: Channel) {
        channels.withLock { $0.removeAll { $0 === channel } }
    }

    /// Tells the channels of `sessionID` what `event` of a video's or a picture's session (`category`) means to an
    /// AirPlay client, if anything.
    func publish(_ event: PlaybackEvent, sessionID: String, category: AirPlayEvent.Category = .video) {
        guard let event = AirPlayEvent(event, category: category) else { return }
        for channel in channels.withLock({ $0 }) where channel.sessionID == sessionID { channel.add(event) }
    }

    /// castd stops: every channel's thread stops waiting.
    func closeAll() {
        for channel in channels.withLock({ $0 }) { channel.close() }
    }
}
