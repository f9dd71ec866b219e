extension TLSConnection {
    /// The exporter label both ends use for the pairing binding (RFC 8446 section 7.5; RFC 5705 reserves the
    /// "EXPORTER" prefix for such application labels).
    public static let pairingBindingLabel = "EXPORTER-cast-pairing-srp"

    /// The 32 bytes that bind SRP pairing proofs to this TLS session: the keying-material exporter with
    /// `pairingBindingLabel` and no context. Pass them as `binding` to `SRPClient.respond` and
    /// `SRPServer.verify`; both ends of one connection get the same bytes, the two legs of a relay do not.
    public func pairingBinding() throws -> [UInt8] {
        try exportKeyingMaterial(label: Self.pairingBindingLabel, length: 32)
    }
}
