import CastProtocol
import CastSecurity
import Foundation
import Synchronization

/// Where senders pair with this receiver: the store of paired senders, the rate limit on
/// attempts, and the secret of each attempt (a fresh PIN, or the configured password).
///
/// Thread-safety: the limiter is behind a Mutex; the store is Sendable and serialises its own
/// writes (and guards against other processes with a lock file). SRP state of one attempt lives
/// in its connection, never here. The failure count is written to the state directory under a Mutex of its own
/// (`persisted`), never under the limiter's, so that a slow disk never holds up the limiter.
final class PairingDesk: Sendable {
    private let auth: AuthMode
    private let password: String?
    private let store: PairedSenders?
    /// Why pairings cannot be stored, when they cannot (pairing is then refused rather than lost).
    let storeProblem: String?
    private let identity: Identity
    private let logger: Logger
    private let limiter: Mutex<PairingAttemptLimiter>
    /// Where the failure count is kept across restarts, and the count last written there (nil: none is written,
    /// as when the state directory cannot be written).
    private let stateDirectory: String
    private let persisted: Mutex<Int?>
    /// Told the PIN when an attempt opens and nil when it ends (the idle screen shows it).
    private let pinObserver = Mutex<(@Sendable (String?) -> Void)?>(nil)

    /// What the secret is called in messages.
    private var secretWord: String { auth == .password ? "password" : "PIN" }

    /// The SRP user name both sides use; the secret is what distinguishes attempts.
    static let srpUsername = "cast"

    init(
        auth: AuthMode, password: String?, stateDirectory: String, identity: Identity, logger: Logger,
        attemptLimit: Int = PairingAttemptLimiter.defaultAttemptLimit
    ) {
        var limiter = PairingAttemptLimiter(attemptLimit: attemptLimit)
        // Failed attempts before a restart still count: a restart must not hand a guesser fresh attempts. A count
        // that cannot be read closes pairing (the operator's SIGHUP reopens it and writes a fresh count).
        let failures: Int
        do {
            failures = try PairingFailureCount.read(directory: stateDirectory)
        } catch {
            logger.error("\(error): pairing stays closed until castd gets SIGHUP")
            failures = attemptLimit
        }
        limiter.restore(consecutiveFailures: failures, now: .now)
        self.limiter = Mutex(limiter)
        self.stateDirectory = stateDirectory
        self.persisted = Mutex(failures)
        self.auth = auth
        self.password = password
        self.identity = identity
        self.logger = logger
        var problem: String?
        var store: PairedSenders?
        do {
            store = try PairedSenders.load(directory: stateDirectory)
            if access(stateDirectory, W_OK) != 0 {
                problem = "the state directory \(stateDirectory) is not writable"
            }
        } catch {
            problem = "\(error)"
        }
        self.store = store
        self.storeProblem = problem
        if limiter.isClosed {
            logger.warning(
                "pairing is closed: \(failures) pairing attempts in a row failed before this start; paired senders "
                    + "still connect. To let a new sender pair, reopen it: send castd SIGHUP")
        }
    }

    /// Writes the limiter's failure count to the state directory when it changed since the last write.
    private func persistFailures() {
        persisted.withLock { written in
            let count = limiter.withLock { $0.consecutiveFailures }
            guard count != written else { return }
            do {
                try PairingFailureCount.write(count, directory: stateDirectory)
                written = count
            } catch {
                logger.error("\(error): a restart would forget failed pairing attempts")
            }
        }
    }

    /// Whether a TLS peer key belongs to a paired sender. A store that cannot be read admits nobody.
    func isPaired(_ key: [UInt8]?) -> Bool {
        guard let key, let store else { return false }
        do {
            return try store.contains(publicKey: key)
        } catch {
            logger.error("cannot read the pairing store: \(error)")
            return false
        }
    }

    /// The answer to a `pairingStart`: a challenge and the attempt it opened (its SRP server, which must verify the
    /// proof, and its number), or a failure to send before closing.
    func challenge(for start: PairingStart, peerKey: [UInt8]?) -> PairingOutcome<(PairingChallenge, PairingAttempt)> {
        guard let peerKey, peerKey == start.publicKey else {
            return .refuse(
                PairingFailure(
                    reason: .notAccepted, message: "the key in pairingStart is not the key of this TLS connection"))
        }
        if let storeProblem {
            logger.error("pairing refused: cannot store pairings (\(storeProblem))")
            return .refuse(
                PairingFailure(reason: .notAccepted, message: "this receiver cannot store pairings right now"))
        }
        let (decision, number) = limiter.withLock { ($0.beginAttempt(now: .now), $0.attemptNumber) }
        persistFailures()  // an attempt left to time out is counted when the next begins
        guard decision == .allowed else { return .refuse(failure(for: decision)) }
        let secret: String
        switch auth {
        case .pin:
            let pin = PairingPIN.random()
            secret = pin.description
            logger.announce("Pairing PIN: \(pin)")
            showPIN(pin.description)
            logger.info("\"\(start.name)\" asks to pair; the PIN above is for this attempt only")
        case .password:
            secret = password ?? ""
            logger.info("\"\(start.name)\" asks to pair with the password")
        case .none:
            preconditionFailure("the state machine refuses pairing under auth none")
        }
        let salt = SRPServer.makeSalt()
        let verifier = SRPServer.makeVerifier(
            username: Self.srpUsername, password: secret, salt: salt, group: .rfc5054_3072, hash: .sha512)
        let server = SRPServer(
            username: Self.srpUsername, salt: salt, verifier: verifier, group: .rfc5054_3072, hash: .sha512)
        return .proceed((PairingChallenge(salt: salt, B: server.B), PairingAttempt(number: number, server: server)))
    }

    /// Verifies the proof (bound to this TLS session) and stores the sender; the confirmation to
    /// send, or a failure (wrong PIN: with the time to wait).
    func confirm(
        _ start: PairingStart, _ proof: PairingProof, attempt: PairingAttempt, tls: TLSConnection
    ) -> PairingOutcome<PairingConfirmation> {
        // Whatever the outcome, this attempt's PIN is spent.
        defer { showPIN(nil) }
        guard limiter.withLock({ $0.isOpen(attempt: attempt.number) }) else {
            // It timed out (and was counted) just before its proof arrived; another attempt may be open now.
            return .refuse(PairingFailure(reason: .notAccepted, message: "this pairing attempt timed out"))
        }
        let m2: [UInt8]
        do {
            m2 = try attempt.server.verify(A: proof.A, M1: proof.M1, binding: tls.pairingBinding())
        } catch {
            let decision = limiter.withLock { $0.recordFailure(now: .now) }
            persistFailures()
            logger.warning("pairing with \"\(start.name)\" failed: wrong \(secretWord) or a relayed session")
            var failure = failure(for: decision)
            failure.reason = .authenticationFailed
            failure.message = "wrong \(secretWord)" + (failure.retryAfter.map { "; try again in \($0) s" } ?? "")
            if decision == .closed {
                failure.message = self.failure(for: decision).message
                logClosed()
            }
            return .refuse(failure)
        }
        do {
            guard let store else { throw PairingStoreMissing() }
            let paired = try store.add(publicKey: start.publicKey, name: start.name)
            limiter.withLock { $0.recordSuccess() }
            persistFailures()
            logger.info("paired with \"\(start.name)\" (id \(paired.id))")
            return .proceed(PairingConfirmation(M2: m2, publicKey: identity.publicKey))
        } catch {
            limiter.withLock { $0.cancelAttempt() }
            logger.error("pairing with \"\(start.name)\" not stored: \(error)")
            return .refuse(PairingFailure(reason: .notAccepted, message: "the receiver could not store the pairing"))
        }
    }

    /// The attempt ended without a proof (the peer went away, or its time ran out): a failed attempt, unless the
    /// limiter already ended it (timed out) and another may be open.
    func abandon(_ attempt: PairingAttempt) {
        let (counted, closed) = limiter.withLock { limiter -> (Bool, Bool) in
            guard limiter.isOpen(attempt: attempt.number) else { return (false, false) }
            limiter.abandonAttempt(now: .now)
            return (true, limiter.isClosed)
        }
        guard counted else { return }
        persistFailures()
        showPIN(nil)
        if closed { logClosed() }
    }

    /// The operator reopens pairing after failed attempts closed it (SIGHUP).
    func reopen() {
        let wasClosed = limiter.withLock { limiter -> Bool in
            defer { limiter.reopen() }
            return limiter.isClosed
        }
        persistFailures()
        if wasClosed { logger.info("pairing reopened") }
    }

    private func logClosed() {
        let limit = limiter.withLock { $0.attemptLimit }
        logger.warning(
            "pairing closed: \(limit) pairing attempts in a row failed (wrong, abandoned or timed out); paired senders "
                + "still connect. To let a new sender pair, reopen it: send castd SIGHUP (a restart does not)")
    }

    /// Calls `observer` with each attempt's PIN when it is made, and with nil when the attempt ends (PIN mode only).
    func observePIN(_ observer: @escaping @Sendable (String?) -> Void) {
        pinObserver.withLock { $0 = observer }
    }

    private func showPIN(_ pin: String?) {
        guard auth == .pin, let observer = pinObserver.withLock({ $0 }) else { return }
        observer(pin)
    }

    private func failure(for decision: PairingAttemptLimiter.Decision) -> PairingFailure {
        let reason = decision.failureReason ?? .busy
        let retry = decision.retryAfterSeconds
        let message: String
        switch reason {
        case .locked:
            message = "too many failed pairing attempts: pairing is closed until the receiver's operator reopens it"
        case .backingOff: message = "wait \(retry ?? 1) s before the next attempt"
        case .busy: message = "another pairing is in progress"
        default: message = "pairing is not possible now"
        }
        return PairingFailure(reason: reason, message: message, retryAfter: retry)
    }

    private struct PairingStoreMissing: Error, CustomStringConvertible {
        var description: String { "no pairing store" }
    }
}

/// One open pairing attempt, as its connection holds it.
struct PairingAttempt {
    /// The limiter's number for it.
    let number: Int
    /// The SRP state that verifies its proof.
    let server: SRPServer
}

/// What a pairing step comes to: go on with a value, or refuse with a failure to send before closing.
enum PairingOutcome<Value> {
    /// Go on.
    case proceed(Value)
    /// Send this failure and close.
    case refuse(PairingFailure)
}
