import CastSystem

/// The arithmetic both sides of SRP-6a share, for one group and hash.
///
/// The exact transcript (RFC 5054 / RFC 2945 SRP-6a with HomeKit's proofs, plus the TLS binding).
/// `|` is concatenation, integers are big-endian; `PAD(x)` is `x` left-padded with zeros to the byte length
/// of N; an integer written without `PAD` is in its minimal form (no leading zero bytes). `I` is the
/// username and `P` the password, both UTF-8; `s` is the salt as raw bytes.
///
///     k  = H(N | PAD(g))
///     x  = H(s | H(I | ":" | P))
///     v  = g^x mod N                         (the verifier)
///     A  = g^a mod N                         (a: 32 bytes from RAND_bytes)
///     B  = (k*v + g^b) mod N                 (b: 32 bytes from RAND_bytes)
///     u  = H(PAD(A) | PAD(B))
///     S  = (B - k*g^x)^(a + u*x) mod N       (client)
///        = (A * v^u)^b mod N                 (server)
///     K  = H(S)                              (the session key)
///     M1 = H(H(N) xor H(g) | H(I) | s | A | B | K | binding)
///     M2 = H(A | M1 | K | binding)
///
/// `binding` is the caller's TLS keying-material exporter output, appended raw as the last input of both
/// proofs. K has the hash's fixed length and the binding comes last, so the concatenation is unambiguous.
/// With an empty binding both proofs are exactly HomeKit's (and the Python `srptools` package's), which is
/// how the test vectors check them. The server rejects `A % N == 0`, the client `B % N == 0` and `u == 0`;
/// both also reject values that are not below N, so every accepted value has one canonical encoding.
final class SRPSession {
    let group: SRPGroup
    let hash: SRPHash
    let context = BigNumberContext()
    let prime: BigNumber
    let generator: BigNumber
    /// k = H(N | PAD(g)).
    let multiplier: BigNumber

    init(group: SRPGroup, hash: SRPHash) {
        self.group = group
        self.hash = hash
        prime = BigNumber(bytes: group.prime)
        generator = BigNumber(word: group.generator)
        multiplier = BigNumber(bytes: hash(group.prime, generator.bytes(paddedTo: group.prime.count)))
    }

    /// The byte length of N, the width of PAD().
    var primeCount: Int { group.prime.count }

    /// x = H(s | H(I | ":" | P)).
    func passwordKey(username: String, password: String, salt: [UInt8]) -> BigNumber {
        let inner = hash(Array(username.utf8), Array(":".utf8), Array(password.utf8))
        let x = BigNumber(bytes: hash(salt, inner))
        x.markSecret()
        return x
    }

    /// g^e mod N.
    func power(_ exponent: BigNumber) -> BigNumber {
        context.modExp(generator, exponent, prime)
    }

    /// A fresh secret exponent (a or b): 32 random bytes, never zero.
    func randomPrivateValue() -> BigNumber {
        while true {
            let value = BigNumber(bytes: secureRandomBytes(32))
            if !value.isZero {
                value.markSecret()
                return value
            }
        }
    }

    /// A peer's public value (A or B) as a number, if it is a usable one: at most N's width, below N and
    /// not zero (so not ≡ 0 mod N). `name` says which value, for the error.
    func peerValue(_ bytes: [UInt8], name: String) throws(SecurityError) -> BigNumber {
        // Leading zeros are tolerated (a peer may send PAD(A)); anything wider than N is not.
        guard bytes.count <= primeCount else {
            throw SecurityError(.invalidPeerValue, "SRP \(name) is \(bytes.count) bytes, wider than the group")
        }
        let value = BigNumber(bytes: bytes)
        if context.mod(value, prime).isZero {
            throw SecurityError(.invalidPeerValue, "SRP \(name) is 0 modulo N")
        }
        guard value.compare(prime) < 0 else {
            throw SecurityError(.invalidPeerValue, "SRP \(name) is not below N")
        }
        return value
    }

    /// u = H(PAD(A) | PAD(B)); zero is refused (it would make S independent of the password).
    func scrambler(A: BigNumber, B: BigNumber) throws(SecurityError) -> BigNumber {
        let u = BigNumber(bytes: hash(A.bytes(paddedTo: primeCount), B.bytes(paddedTo: primeCount)))
        if u.isZero { throw SecurityError(.invalidPeerValue, "SRP u = H(PAD(A) | PAD(B)) is 0") }
        return u
    }

    /// K = H(S).
    func sessionKey(premasterSecret S: BigNumber) -> [UInt8] {
        hash(S.bytes)
    }

    /// M1 = H(H(N) xor H(g) | H(I) | s | A | B | K | binding).
    func clientProof(
        username: String, salt: [UInt8], A: BigNumber, B: BigNumber, K: [UInt8], binding: [UInt8]
    ) -> [UInt8] {
        let hashN = hash(group.prime)
        let hashG = hash(generator.bytes)
        let mixed = zip(hashN, hashG).map { $0 ^ $1 }
        return hash(mixed, hash(Array(username.utf8)), salt, A.bytes, B.bytes, K, binding)
    }

    /// M2 = H(A | M1 | K | binding).
    func serverProof(A: BigNumber, M1: [UInt8], K: [UInt8], binding: [UInt8]) -> [UInt8] {
        hash(A.bytes, M1, K, binding)
    }

    /// Refuses a salt that is empty or absurdly long (a peer's value on the client side).
    static func checkSalt(_ salt: [UInt8]) throws(SecurityError) {
        guard !salt.isEmpty, salt.count <= maximumSaltCount else {
            throw SecurityError(.invalidPeerValue, "SRP salt of \(salt.count) bytes (1...\(maximumSaltCount) allowed)")
        }
    }

    /// The longest salt accepted.
    static let maximumSaltCount = 64
}
