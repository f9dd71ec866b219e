import CastBase
import CastProtocol
import FoundationEssentials
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
    ///   ``DiscoveryError/libraryMissing`` when avahi-client (opened on the first browse) is not installed;
    ///   ``DiscoveryError/browseFailed`` when the daemon cannot browse.
    /// With `cancellation`, returns (what was resolved so far) as soon as another thread cancels it.
    public static func browse(
        serviceType: String = ServiceAdvertisement.castServiceType, timeout: Duration,
        until found: ((DiscoveredReceiver) -> Bool)? = nil, cancellation: BrowseCancellation? = nil
    ) throws -> [DiscoveredReceiver] {
        let session = try BrowseSession(serviceType: serviceType)
        return try session.run(timeout: timeout, until: found, cancellation: cancellation)
    }
}

/// Ends one or more running `Browser.browse` calls early, from any thread: two browses that look for the same
/// name share one, and the first that finds it ends the other at once instead of letting it wait out its time.
///
/// Thread-safety: `Sendable`. `lock` guards `isCancelled` and the polls of the browses running now, so that a poll
/// is woken only while its browse still owns it (`avahi_simple_poll_wakeup` is safe from another thread).
public final class BrowseCancellation: Sendable {
    private struct State {
        var isCancelled = false
        /// The polls' addresses (a pointer is not Sendable; the address is, and the lock keeps it valid).
        var polls: Set<UInt> = []
    }
    private let lock = Mutex(State())

    public init() {}

    /// Ends every browse that uses this cancellation, now and later.
    public func cancel() {
        lock.withLock { state in
            state.isCancelled = true
            for address in state.polls {
                if let poll = OpaquePointer(bitPattern: address) { BrowseSession.wake(poll) }
            }
        }
    }

    public var isCancelled: Bool { lock.withLock { $0.isCancelled } }

    /// Registers a running browse's poll; false when already cancelled.
    func register(_ poll: OpaquePointer) -> Bool {
        lock.withLock { state in
            if state.isCancelled { return false }
            state.polls.insert(Self.address(of: poll))
            return true
        }
    }

    func unregister(_ poll: OpaquePointer) {
        let address = Self.address(of: poll)
        _ = lock.withLock { $0.polls.remove(address) }
    }

    private static func address(of poll: OpaquePointer) -> UInt { UInt(bitPattern: Int(bitPattern: poll)) }
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
    /// - Throws: ``DiscoveryError/daemonNotRunning`` at once when no avahi-daemon is reachable;
    ///   ``DiscoveryError/libraryMissing`` when avahi-client is not installed.
    public static func watch(
        serviceType: String = ServiceAdvertisement.castServiceType,
        onEvent: @escaping @Sendable (BrowseEvent) -> Void, onEnd: @escaping @Sendable ((any Error)?) -> Void
    ) throws -> BrowseWatch {
        // Connect here so that a missing daemon is reported to the caller, then hand the session to the thread.
        // The session is sent to the thread (`startDetachedThread` takes its body `sending`): only that thread uses it.
        let session = try BrowseSession(serviceType: serviceType)
        let watch = BrowseWatch()
        startDetachedThread(name: "CastDiscovery watch") {
            do {
                try session.watch(onChange: onEvent, isCancelled: { watch.isCancelled })
                onEnd(nil)
            } catch {
                onEnd(error)
            }
        }
        return watch
    }
}
