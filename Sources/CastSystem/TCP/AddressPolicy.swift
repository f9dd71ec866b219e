/// Which addresses an outgoing connection may reach, checked on the address actually connected to (after name
/// resolution, for every connection), so that neither a name that resolves to 127.0.0.1 nor a redirect gets around it.
public enum AddressPolicy: Sendable, Equatable {
    /// Any address: what a paired Cast sender's URL may reach (a NAS on the LAN, a server on the box itself).
    case any
    /// What an AirPlay client's URL may reach: AirPlay clients are strangers (no pairing), and castd must not fetch
    /// for them from places that only the box can reach: no loopback, link-local, multicast, broadcast or
    /// unspecified address, and none of this host's own addresses. Other LAN and Internet addresses are fine (the
    /// phone serves its own media from its LAN address).
    case strangers

    /// Why `address` may not be reached, nil when it may. `own` is this host's interface addresses
    /// (`IPAddress.interfaceAddresses()`).
    public func refusal(of address: IPAddress, own: Set<IPAddress>) -> String? {
        guard self == .strangers else { return nil }
        if address.isLoopback { return "\(address) is a loopback address" }
        if address.isUnspecified { return "\(address) is an unspecified address" }
        if address.isLinkLocal { return "\(address) is a link-local address" }
        if address.isMulticastOrBroadcast { return "\(address) is a multicast or broadcast address" }
        if own.contains(address) { return "\(address) is this box's own address" }
        return nil
    }
}
