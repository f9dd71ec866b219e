import Foundation
import Synchronization

/// Finds receivers on the local network through avahi-client.
public enum Browser {
    /// Browses `serviceType` for up to `timeout`, resolving each instance and returning one entry per instance
    /// name (a service seen on several interfaces or protocols is one receiver; an IPv4 address is preferred),
    /// sorted by name.
    ///
    /// Returns early, but not before `min(timeout, 1 s)`, once avahi said `AVAHI_BROWSER_ALL_FOR_NOW` and every
    /// resolve has finished. Blocks the calling thread.
    /// With `until`, returns as soon as a resolved receiver satisfies it (what was resolved so far).
    /// - Throws: ``DiscoveryError/daemonNotRunning`` at once when no avahi-daemon is reachable;
    ///   ``DiscoveryError/browseFailed`` when the daemon cannot browse.
    public static func browse(
        serviceType: String = ServiceAdvertisement.castServiceType, timeout: Duration,
        until found: ((DiscoveredReceiver) -> Bool)? = nil
    ) throws -> [DiscoveredReceiver] {
        let session = try BrowseSession(serviceType: serviceType)
        return try session.run(timeout: timeout, until: found)
    }
}

/// A change among the services a watch sees.
public enum BrowseEvent: Sendable, Equatable {
    /// A service was resolved for the first time.
    case appeared(DiscoveredReceiver)
    /// A service's address, port or TXT record changed.
    case updated(DiscoveredReceiver)
    /// A service was withdrawn.
    case disappeared(name: String)
}

/// A running watch of a service type (see `Browser.watch`); `cancel()` ends it.
///
/// Thread-safety: `Sendable`; `cancel()` may be called from any thread, any number of times.
public final class BrowseWatch: Sendable {
    private let cancelled = Atomic<Bool>(false)

    init() {}

    /// Ends the watch within 250 ms; no event is reported after its thread notices.
    public func cancel() { cancelled.store(true, ordering: .relaxed) }

    var isCancelled: Bool { cancelled.load(ordering: .relaxed) }
}

extension Browser {
    /// Follows `serviceType` on a thread of its own: `onEvent` is called on that thread for every service that
    /// appears, changes or disappears, until the watch is cancelled or avahi fails (then `onEnd` gets the error;
    /// after `cancel()` it gets nil).
    /// - Throws: ``DiscoveryError/daemonNotRunning`` at once when no avahi-daemon is reachable.
    public static func watch(
        serviceType: String = ServiceAdvertisement.castServiceType,
        onEvent: @escaping @Sendable (BrowseEvent) -> Void, onEnd: @escaping @Sendable ((any Error)?) -> Void
    ) throws -> BrowseWatch {
        // Connect here so that a missing daemon is reported to the caller, then hand the session to the thread.
        let session = UncheckedSession(session: try BrowseSession(serviceType: serviceType))
        let watch = BrowseWatch()
        let thread = Thread {
            do {
                try session.session.watch(onChange: onEvent, isCancelled: { watch.isCancelled })
                onEnd(nil)
            } catch {
                onEnd(error)
            }
        }
        thread.name = "CastDiscovery watch"
        thread.start()
        return watch
    }
}

/// Moves a session to the thread that runs it; it is used on that thread only from then on.
private struct UncheckedSession: @unchecked Sendable {
    let session: BrowseSession
}
