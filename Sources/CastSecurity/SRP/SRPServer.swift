public import CastSystem

/// The receiver's side of SRP-6a pairing: checks the sender's proof of the PIN (or password), bound to the
/// TLS session, and proves its own knowledge in return. See `SRPSession` for the exact transcript.
///
/// Use: make a salt and verifier (`makeSalt()`, `makeVerifier`), create the server, send salt and `B`;
/// on the sender's A and M1 call `verify(A:M1:binding:)` and send the returned M2. A fresh PIN means a
/// fresh salt, verifier and server for every attempt.
///
/// Not Sendable: one object per pairing attempt, used by the one task that runs that connection.
public final class SRPServer {
    private let session: SRPSession
    private let username: String
    private let salt: [UInt8]
    private let verifier: BigNumber
    private let privateValue: BigNumber
    private let publicValue: BigNumber
    private var state: State = .started

    private enum State {
        /// B was made; waiting for A and M1.
        case started
        /// M1 matched; M2 was returned.
        case verified(sessionKey: [UInt8])
        /// M1 did not match or A was invalid; the object must not be used again.
        case failed
    }

    /// The server's public value B = (k*v + g^b) mod N (minimal big-endian bytes), to send with the salt.
    public let B: [UInt8]

    /// A fresh 16-byte salt from `RAND_bytes`.
    public static func makeSalt() -> [UInt8] {
        secureRandomBytes(16)
    }

    /// The verifier v = g^x mod N with x = H(s | H(I | ":" | P)), as stored by a receiver; PAD()ded to N's width.
    public static func makeVerifier(
        username: String, password: String, salt: [UInt8], group: SRPGroup = .rfc5054_3072, hash: SRPHash = .sha512
    ) -> [UInt8] {
        let session = SRPSession(group: group, hash: hash)
        let x = session.passwordKey(username: username, password: password, salt: salt)
        return session.power(x).bytes(paddedTo: session.primeCount)
    }

    /// Starts an exchange with a fresh secret b from `RAND_bytes`.
    /// - Parameters:
    ///   - salt: the salt the verifier was made with, 1 to 64 bytes.
    ///   - verifier: from `makeVerifier` with the same username, salt, group and hash.
    public convenience init(
        username: String, salt: [UInt8], verifier: [UInt8], group: SRPGroup = .rfc5054_3072, hash: SRPHash = .sha512
    ) {
        let session = SRPSession(group: group, hash: hash)
        self.init(session: session, username: username, salt: salt, verifier: verifier, b: session.randomPrivateValue())
    }

    /// Starts an exchange with a given secret b (big-endian bytes): for known-answer tests only.
    convenience init(
        username: String, salt: [UInt8], verifier: [UInt8], group: SRPGroup, hash: SRPHash, b: [UInt8]
    ) {
        let value = BigNumber(bytes: b)
        value.markSecret()
        let session = SRPSession(group: group, hash: hash)
        self.init(session: session, username: username, salt: salt, verifier: verifier, b: value)
    }

    private init(session: SRPSession, username: String, salt: [UInt8], verifier: [UInt8], b: BigNumber) {
        precondition(
            !salt.isEmpty && salt.count <= SRPSession.maximumSaltCount, "salt must be 1...64 bytes")
        let v = BigNumber(bytes: verifier)
        precondition(!v.isZero && v.compare(session.prime) < 0, "the verifier is not a value modulo N")
        self.session = session
        self.username = username
        self.salt = salt
        self.verifier = v
        privateValue = b
        // B = (k * v + g^b) mod N
        let context = session.context
        publicValue = context.modAdd(
            context.modMul(session.multiplier, v, session.prime), session.power(b), session.prime)
        B = publicValue.bytes
    }

    /// Checks the sender's A and proof M1 (M1 in constant time) and returns the proof M2 to send back.
    ///
    /// - Parameter binding: the TLS keying-material exporter output of this connection (see `SRPClient`).
    /// - Throws: `SecurityError` `.invalidPeerValue` when A % N == 0, A ≥ N or u == 0 (a broken or hostile
    ///   peer); `.authenticationFailed` when M1 is wrong: a wrong PIN or password, or a relayed session.
    ///   Either way the exchange is over and no M2 may be sent.
    public func verify(A clientValue: [UInt8], M1: [UInt8], binding: [UInt8]) throws(SecurityError) -> [UInt8] {
        guard case .started = state else { preconditionFailure("SRPServer.verify called twice") }
        state = .failed
        let A = try session.peerValue(clientValue, name: "A")
        let u = try session.scrambler(A: A, B: publicValue)
        let context = session.context
        // S = (A * v^u) ^ b mod N
        let base = context.modMul(A, context.modExp(verifier, u, session.prime), session.prime)
        let S = context.modExp(base, privateValue, session.prime)
        let K = session.sessionKey(premasterSecret: S)
        let expected = session.clientProof(username: username, salt: salt, A: A, B: publicValue, K: K, binding: binding)
        guard constantTimeEqual(M1, expected) else {
            throw SecurityError(
                .authenticationFailed, "the sender's SRP proof M1 is wrong (wrong PIN or relayed session)")
        }
        state = .verified(sessionKey: K)
        return session.serverProof(A: A, M1: expected, K: K, binding: binding)
    }

    /// K = H(S), once `verify(A:M1:binding:)` has succeeded; `nil` before.
    public var sessionKey: [UInt8]? {
        if case .verified(let key) = state { return key }
        return nil
    }
}

@available(*, unavailable, message: "one SRPServer belongs to one pairing attempt on one connection")
extension SRPServer: Sendable {}
