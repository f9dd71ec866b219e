internal import CAvahi
import Synchronization

/// Publishes one ``ServiceAdvertisement`` through avahi-client on an `AvahiThreadedPoll`.
///
/// The client is created with `AVAHI_CLIENT_NO_FAIL`, so a missing or restarting avahi-daemon is survived:
/// the advertiser reports `.daemonUnavailable` and, when a daemon (re)appears, publishes again (`.published`).
/// A name collision (`AVAHI_ENTRY_GROUP_COLLISION`, or `AVAHI_ERR_COLLISION` when another service of the same
/// daemon has the name) makes it take `avahi_alternative_service_name` and report `.renamed`.
///
/// Events arrive in order on a private serial queue, never on avahi's thread, so a handler may call ``stop()``.
public final class Advertiser: Sendable {
    // Thread-safety: `state` is only touched inside `state.withLock`; everything avahi owns
    // lives in the AvahiPublication, which is touched only on the poll thread, or under
    // avahi_threaded_poll_lock (update), or while the poll thread is not running (start, stop).
    private enum State {
        /// Not started; `start()` publishes this advertisement.
        case idle(ServiceAdvertisement)
        /// Running: the poll thread owns the publication.
        case running(poll: OpaquePointer, publication: AvahiPublication)
        /// Stopped for good; everything is freed.
        case stopped
    }

    private let state: Mutex<State>
    private let events: AdvertiserEventSink

    /// An advertiser of `ad`, reporting through `onEvent`; nothing is published before ``start()``.
    public init(_ ad: ServiceAdvertisement, onEvent: @escaping @Sendable (AdvertiserEvent) -> Void) {
        state = Mutex(.idle(ad))
        events = AdvertiserEventSink(onEvent)
    }

    deinit {
        stop()
    }

    /// Starts publishing. Never throws: without a daemon it reports `.daemonUnavailable` and waits for one; without
    /// the avahi client library (opened here, on first use) it reports `.failed` and stops.
    /// Calling it again, or after ``stop()``, does nothing.
    public func start() {
        state.withLock { state in
            guard case .idle(let ad) = state else { return }
            do throws(DiscoveryError) {
                try Avahi.load()
            } catch {
                events.send(.failed(error.reason))
                state = .stopped
                return
            }
            guard let poll = cast_avahi_threaded_poll_new() else {
                events.send(.failed("cannot create avahi's event loop"))
                state = .stopped
                return
            }
            let publication = AvahiPublication(
                ad, serviceType: ad.serviceType, api: cast_avahi_threaded_poll_get(poll),
                events: events)
            publication.connect()  // callbacks from inside avahi_client_new run here, before the thread exists
            guard cast_avahi_threaded_poll_start(poll) >= 0 else {
                publication.close()
                cast_avahi_threaded_poll_free(poll)
                events.send(.failed("cannot start avahi's event loop thread"))
                state = .stopped
                return
            }
            state = .running(poll: poll, publication: publication)
        }
    }

    /// Re-publishes with a new TXT record (`avahi_entry_group_update_service_txt_strlst`).
    public func update(txt: [String: String]) {
        state.withLock { state in
            switch state {
            case .idle(var ad):
                ad.txt = txt
                state = .idle(ad)
            case .running(let poll, let publication):
                cast_avahi_threaded_poll_lock(poll)
                publication.update(txt: txt)
                cast_avahi_threaded_poll_unlock(poll)
            case .stopped:
                break
            }
        }
    }

    /// Withdraws the service and frees everything. Idempotent; after it returns no new event is delivered.
    public func stop() {
        state.withLock { state in
            if case .running(let poll, let publication) = state {
                cast_avahi_threaded_poll_stop(poll)
                publication.close()
                cast_avahi_threaded_poll_free(poll)
            }
            state = .stopped
        }
        events.close()
    }
}
