public import CastSystem

/// The sender's side of SRP-6a pairing: proves knowledge of the PIN (or password) without revealing it,
/// bound to the TLS session. See `SRPSession` for the exact transcript.
///
/// Use: `let client = SRPClient(username:password:)`, send `A`; on the receiver's salt and B call
/// `respond(salt:B:binding:)` and send the returned M1; on the receiver's M2 call `verify(M2:)`. Only after
/// `verify` succeeds is `sessionKey` set and is the receiver known to hold the same PIN.
///
/// Not Sendable: one object per pairing attempt, used by the one task that runs that connection.
public final class SRPClient {
    private let session: SRPSession
    private let username: String
    private let password: String
    private let privateValue: BigNumber
    private let publicValue: BigNumber
    private var state: State = .started

    private enum State {
        /// A was made; waiting for the receiver's salt and B.
        case started
        /// M1 was sent; waiting for M2, which must equal `expectedM2`.
        case responded(expectedM2: [UInt8], sessionKey: [UInt8])
        /// M2 matched.
        case verified(sessionKey: [UInt8])
        /// A step failed; the object must not be used again.
        case failed
    }

    /// The client's public value A = g^a mod N (minimal big-endian bytes), to send to the receiver.
    public let A: [UInt8]

    /// Starts an exchange with a fresh secret a from `RAND_bytes`.
    /// - Parameters:
    ///   - username: SRP's I; both sides must use the same one.
    ///   - password: the PIN or password, as UTF-8.
    public convenience init(
        username: String, password: String, group: SRPGroup = .rfc5054_3072, hash: SRPHash = .sha512
    ) {
        let session = SRPSession(group: group, hash: hash)
        self.init(session: session, username: username, password: password, a: session.randomPrivateValue())
    }

    /// Starts an exchange with a given secret a (big-endian bytes): for known-answer tests only.
    convenience init(username: String, password: String, group: SRPGroup, hash: SRPHash, a: [UInt8]) {
        let value = BigNumber(bytes: a)
        value.markSecret()
        self.init(session: SRPSession(group: group, hash: hash), username: username, password: password, a: value)
    }

    private init(session: SRPSession, username: String, password: String, a: BigNumber) {
        self.session = session
        self.username = username
        self.password = password
        privateValue = a
        publicValue = session.power(a)
        A = publicValue.bytes
    }

    /// Computes the shared key from the receiver's salt and B and returns the proof M1 to send.
    ///
    /// - Parameter binding: the TLS keying-material exporter output of this connection; the receiver must
    ///   use the exporter output of its own end, which is equal only when no one relays the session.
    /// - Throws: `SecurityError` `.invalidPeerValue` when B % N == 0, B ≥ N, u == 0 or the salt is empty or
    ///   longer than 64 bytes; the exchange is then over.
    public func respond(salt: [UInt8], B serverValue: [UInt8], binding: [UInt8]) throws(SecurityError) -> [UInt8] {
        guard case .started = state else { preconditionFailure("SRPClient.respond called twice") }
        state = .failed
        try SRPSession.checkSalt(salt)
        let B = try session.peerValue(serverValue, name: "B")
        let u = try session.scrambler(A: publicValue, B: B)
        let context = session.context
        let x = session.passwordKey(username: username, password: password, salt: salt)
        // S = (B - k * g^x) ^ (a + u * x) mod N
        let base = context.modSub(B, context.modMul(session.multiplier, session.power(x), session.prime), session.prime)
        let exponent = context.add(privateValue, context.mul(u, x))
        exponent.markSecret()
        let S = context.modExp(base, exponent, session.prime)
        let K = session.sessionKey(premasterSecret: S)
        let M1 = session.clientProof(username: username, salt: salt, A: publicValue, B: B, K: K, binding: binding)
        let M2 = session.serverProof(A: publicValue, M1: M1, K: K, binding: binding)
        state = .responded(expectedM2: M2, sessionKey: K)
        return M1
    }

    /// Checks the receiver's proof M2 (in constant time).
    /// - Throws: `SecurityError` `.authenticationFailed` when M2 is wrong: the receiver does not hold the same
    ///   PIN, or the session is relayed. The exchange is then over.
    public func verify(M2: [UInt8]) throws(SecurityError) {
        guard case .responded(let expected, let key) = state else {
            preconditionFailure("SRPClient.verify called before respond or twice")
        }
        guard constantTimeEqual(M2, expected) else {
            state = .failed
            throw SecurityError(.authenticationFailed, "the receiver's SRP proof M2 is wrong")
        }
        state = .verified(sessionKey: key)
    }

    /// K = H(S), once `verify(M2:)` has succeeded; `nil` before.
    public var sessionKey: [UInt8]? {
        if case .verified(let key) = state { return key }
        return nil
    }

    /// K before M2 is checked, for the known-answer tests.
    var unverifiedSessionKey: [UInt8]? {
        switch state {
        case .responded(_, let key), .verified(let key): key
        case .started, .failed: nil
        }
    }
}

@available(*, unavailable, message: "one SRPClient belongs to one pairing attempt on one connection")
extension SRPClient: Sendable {}
