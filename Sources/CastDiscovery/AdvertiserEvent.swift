/// What happened to an advertisement, as reported by ``Advertiser``.
public enum AdvertiserEvent: Sendable, Equatable {
    /// The service is established on the network under this name.
    case published(name: String)
    /// A name collision made us take avahi's alternative name (`Living Room` → `Living Room #2`); a
    /// `.published` with the new name follows once it is established.
    case renamed(from: String, to: String)
    /// There is no avahi-daemon, or it went away: the service is not advertised. The advertiser keeps waiting
    /// for a daemon and publishes again (`.published`) when one appears.
    case daemonUnavailable(String)
    /// The daemon refused the service (bad name, TXT record too large, …), or the avahi client library is not
    /// installed; the advertiser does not retry.
    case failed(String)
}
