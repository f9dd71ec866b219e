/// The group of an SRP session: a safe prime N and a generator g modulo N.
///
/// Only the groups of RFC 5054 appendix A are offered, so no caller can pick a weak or malformed group.
public struct SRPGroup: Sendable, Hashable, CustomStringConvertible {
    /// N, big-endian, without leading zeros.
    public let prime: [UInt8]
    /// g.
    public let generator: UInt
    /// The group's name, for messages.
    public let description: String

    private init(name: String, primeHex: String, generator: UInt) {
        self.description = name
        self.prime = bytesFromHex(primeHex)
        self.generator = generator
    }

    /// RFC 5054's 3072-bit group (the RFC 3526 MODP prime) with g = 5: the group Cast pairs with, as HomeKit does.
    public static let rfc5054_3072 = SRPGroup(
        name: "RFC 5054 3072-bit",
        primeHex: """
            FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA6\
            3B139B22514A08798E3404DDEF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245\
            E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7EDEE386BFB5A899FA5AE9F2411\
            7C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F\
            83655D23DCA3AD961C62F356208552BB9ED529077096966D670C354E4ABC9804F1746C08\
            CA18217C32905E462E36CE3BE39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9\
            DE2BCBF6955817183995497CEA956AE515D2261898FA051015728E5A8AAAC42DAD33170D\
            04507A33A85521ABDF1CBA64ECFB850458DBEF0A8AEA71575D060C7DB3970F85A6E1E4C7\
            ABF5AE8CDB0933D71E8C94E04A25619DCEE3D2261AD2EE6BF12FFA06D98A0864D8760273\
            3EC86A64521F2B18177B200CBBE117577A615D6C770988C0BAD946E208E24FA074E5AB31\
            43DB5BFCE0FD108E4B82D120A93AD2CAFFFFFFFFFFFFFFFF
            """,
        generator: 5)

    /// RFC 5054's 1024-bit group with g = 2. Too small for pairing; it exists for the RFC's test vectors.
    public static let rfc5054_1024 = SRPGroup(
        name: "RFC 5054 1024-bit",
        primeHex: """
            EEAF0AB9ADB38DD69C33F80AFA8FC5E86072618775FF3C0B9EA2314C9C256576D674DF74\
            96EA81D3383B4813D692C6E0E0D5D8E250B98BE48E495C1D6089DAD15DC7D7B46154D6B6\
            CE8EF4AD69B15D4982559B297BCF1885C529F566660E57EC68EDBC3C05726CC02FD4CBF4\
            976EAA9AFD5138FE8376435B9FC61D2FC0EB06E3
            """,
        generator: 2)
}

/// The bytes of a hex string of our own (constants); a malformed one is a programming error.
func bytesFromHex(_ hex: String) -> [UInt8] {
    let digits = Array(hex.utf8)
    precondition(digits.count % 2 == 0, "odd number of hex digits")
    func value(_ digit: UInt8) -> UInt8 {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: preconditionFailure("not a hex digit: \(digit)")
        }
    }
    return stride(from: 0, to: digits.count, by: 2).map { value(digits[$0]) << 4 | value(digits[$0 + 1]) }
}
