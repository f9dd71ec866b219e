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
