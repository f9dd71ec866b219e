/// How castd describes itself to AirPlay clients: the `_airplay._tcp` TXT record and `GET /server-info`.
public struct AirPlayDevice: Sendable, Equatable {
    /// The DNS-SD service type AirPlay receivers advertise.
    public static let serviceType = "_airplay._tcp"

    /// The feature bits: bit 0, video (AirPlay 1 `/play`), and bit 1, photo (`PUT /photo`). Bit 5 (slideshow) stays
    /// clear: castd shows the pictures a client sends, one at a time, and runs no slideshows of its own.
    ///
    /// pyatv 0.18.0 (`pyatv/protocols/airplay/utils.py`) picks AirPlay 2 when bit 38 (unified media control) or
    /// bit 48 (CoreUtils pairing) is set, and bit 43 is system pairing: all three stay clear, so clients speak
    /// AirPlay 1 video without pairing. Bit 30 would make pyatv add a RAOP audio service: clear too.
    public static let features: UInt64 = 0x3
    /// The model castd names (not an Apple model: pyatv treats `AppleTV…` as tvOS with a remote-control tunnel).
    public static let model = "Castd1,1"
    /// The AirPlay server version castd answers as: 220.68 is the Apple TV software whose AirPlay 1 video
    /// routes it implements.
    public static let sourceVersion = "220.68"
    /// The protocol version in `/server-info`.
    public static let protocolVersion = "1.0"

    /// `deviceid`: a MAC-style `AA:BB:CC:DD:EE:FF`, the first six bytes of the receiver id, marked locally
    /// administered and unicast so it cannot collide with a real interface's address.
    public let deviceID: String

    /// The description of the receiver with id `receiverID` (hex, at least 12 digits; other text is hashed).
    public init(receiverID: String) {
        var bytes: [UInt8] = []
        var digits = receiverID.utf8.compactMap { byte -> UInt8? in
            switch byte {
            case 0x30...0x39: byte - 0x30
            case 0x61...0x66: byte - 0x61 + 10
            case 0x41...0x46: byte - 0x41 + 10
            default: nil
            }
        }
        if digits.count < 12 {
            // Not a fingerprint: FNV-1a over the text gives stable digits.
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in receiverID.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            digits = (0..<12).map { UInt8((hash >> (4 * UInt64($0))) & 0xF) }
        }
        for index in 0..<6 { bytes.append(digits[2 * index] << 4 | digits[2 * index + 1]) }
        bytes[0] = (bytes[0] | 0x02) & 0xFE
        let hex = Array("0123456789ABCDEF")
        deviceID = bytes.map { String([hex[Int($0 >> 4)], hex[Int($0 & 0xF)]]) }.joined(separator: ":")
    }

    /// The `_airplay._tcp` TXT record: `deviceid`, `features`, `model`, `srcvers`. There is no `ft`: pyatv reads
    /// `ft` before `features` when choosing the AirPlay version; nor `flags`/`pw`, which would ask for a PIN or
    /// password.
    public var txt: [String: String] {
        [
            "deviceid": deviceID, "features": "0x" + String(Self.features, radix: 16, uppercase: true),
            "model": Self.model, "srcvers": Self.sourceVersion,
        ]
    }

    /// The `GET /server-info` body as a binary property list.
    public func serverInfoBody() -> [UInt8] {
        PropertyList.binary([
            "deviceid": deviceID, "macAddress": deviceID, "features": Int(Self.features), "model": Self.model,
            "protocolVersion": Self.protocolVersion, "srcvers": Self.sourceVersion,
        ])
    }
}
