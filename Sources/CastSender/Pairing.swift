import CastBase
import CastProtocol
import CastSecurity
import FoundationEssentials

/// Pairing from the sender's side: SRP-6a with the receiver's PIN (or password) inside TLS, both
/// proofs bound to this TLS session, then each side keeps the other's public key.
public enum Pairing {
    /// Pairs with a receiver. `secret` is asked for once the receiver has shown its PIN (it is
    /// called after the receiver answered, so a prompt appears when the PIN is on screen).
    /// - Returns: the receiver's name (as it calls itself) and id.
    /// - Throws: `CastError` `.notAuthorised` for a wrong PIN, a lockout (with the time to wait) or a
    ///   receiver whose key does not match what this sender knows; `.connectionLost`.
    public static func pair(
        _ receiver: ReceiverDescription, configDirectory: String, senderName: String,
        secret: () -> String?
    ) throws(CastError) -> (name: String, id: String) {
        let tls = try connectTLS(to: receiver, configDirectory: configDirectory, timeout: .seconds(5))
        defer { tls.close() }
        guard let peerKey = tls.peerPublicKey else {
            throw CastError(.notAuthorised, "\(printable(receiver.name)) presented no Ed25519 key")
        }
        let peerID = fingerprint(ofPublicKey: peerKey)
        if !receiver.id.isEmpty, receiver.id.lowercased() != peerID {
            throw CastError(.notAuthorised, identityMismatch(receiver.name, announced: receiver.id, presented: peerID))
        }
        let identity: Identity
        do {
            identity = try Identity.loadOrCreate(directory: configDirectory)
        } catch {
            throw CastError(.usage, "cannot use the sender identity in \(configDirectory): \(error)")
        }
        let reader = FrameReader(tls: tls, receiverName: receiver.name)
        func send(_ message: Message) throws(CastError) {
            do {
                try tls.write(message.frame().encoded())
            } catch {
                throw CastError(.connectionLost, "lost \(printable(receiver.name)) while pairing: \(error)")
            }
        }
        try send(.pairing(.start(PairingStart(name: senderName, publicKey: identity.publicKey))))
        let challenge: PairingChallenge
        switch try reader.next(timeout: .seconds(10)) {
        case .pairing(.challenge(let value)): challenge = value
        case let other: throw refusal(other, receiver.name)
        }
        guard let typed = secret(), !typed.isEmpty else { throw CastError(.usage, "no PIN given") }
        let client = SRPClient(username: "cast", password: typed, group: .rfc5054_3072, hash: .sha512)
        let m1: [UInt8]
        do {
            m1 = try client.respond(salt: challenge.salt, B: challenge.B, binding: try tls.pairingBinding())
        } catch {
            throw CastError(.notAuthorised, "\(printable(receiver.name)) sent an unusable challenge: \(error)")
        }
        try send(.pairing(.proof(PairingProof(A: client.A, M1: m1))))
        let confirmation: PairingConfirmation
        switch try reader.next(timeout: .seconds(30)) {
        case .pairing(.confirmation(let value)): confirmation = value
        case let other: throw refusal(other, receiver.name)
        }
        do {
            try client.verify(M2: confirmation.M2)
        } catch {
            throw CastError(
                .notAuthorised, "\(printable(receiver.name)) did not prove it knows the PIN: pairing refused (\(error))"
            )
        }
        guard confirmation.publicKey == peerKey else {
            throw CastError(
                .notAuthorised,
                "\(printable(receiver.name)) confirmed with a key that is not its TLS key: pairing refused")
        }
        // Now paired, the same connection may say hello: the welcome names the receiver as it names
        // itself, which is the name the pairing is kept under (and checked against later).
        try send(.hello(Hello(name: senderName, software: "cast \(castVersion)")))
        let welcome: Welcome
        switch try reader.next(timeout: .seconds(5)) {
        case .welcome(let value): welcome = value
        case let other: throw reader.unexpected(other, waitingFor: "welcome")
        }
        do {
            let known = try KnownReceivers.load(directory: configDirectory)
            try known.pin(id: peerID, publicKey: peerKey, name: welcome.name, address: receiver.address)
        } catch {
            throw CastError(.usage, "paired, but this sender could not store the pairing: \(error)")
        }
        return (welcome.name, peerID)
    }

    /// The ids of the receivers this sender has paired with (none when the store cannot be read).
    public static func pairedIDs(configDirectory: String) -> [String] {
        (try? KnownReceivers.load(directory: configDirectory).list().map(\.id)) ?? []
    }

    /// Forgets a receiver (by name or id). Returns what was removed.
    public static func unpair(_ nameOrID: String, configDirectory: String) throws(CastError) -> String {
        do {
            let known = try KnownReceivers.load(directory: configDirectory)
            switch try known.remove(nameOrID) {
            case .removed(let receiver): return "\(printable(receiver.name)) (id \(receiver.id))"
            case .notFound: throw CastError(.noSuchReceiver, "no paired receiver \"\(nameOrID)\"")
            case .ambiguous(let matches):
                throw CastError(
                    .usage,
                    "\"\(nameOrID)\" matches several paired receivers: \(matches.map(\.name).joined(separator: ", "))")
            }
        } catch let error as CastError {
            throw error
        } catch {
            throw CastError(.usage, "cannot read the paired receivers: \(error)")
        }
    }

    private static func refusal(_ message: Message, _ name: String) -> CastError {
        if case .pairing(.failure(let failure)) = message {
            return CastError(.notAuthorised, "pairing with \(printable(name)) failed: \(printable(failure.message))")
        }
        if case .error(let error) = message {
            return CastError(.notAuthorised, "pairing with \(printable(name)) failed: \(printable(error.message))")
        }
        return CastError(.connectionLost, "\(printable(name)) sent \(message.type) during pairing")
    }
}

/// The ssh-style warning for a receiver whose key is not the one expected; `because` says what made the sender
/// expect that key, when it was not the receiver's own advertisement.
func identityMismatch(_ name: String, announced: String, presented: String, because: String? = nil) -> String {
    """
    WARNING: the identity of receiver "\(printable(name))" has changed.
      expected id \(printable(announced))\(because.map { " (paired; asked for by \(printable($0)))" } ?? "")
      presented id \(presented)
    Someone could be impersonating it. If the receiver was reset on purpose, forget it with
    'cast unpair "\(printable(name))"' and pair again. Refused.
    """
}

/// Checks, right after the TLS handshake and before anything is sent, that the key the receiver presented is the
/// one its advertisement announced and the one every lead to a paired receiver expects (`ReceiverPin`).
/// - Returns: the receiver's id (the fingerprint of its key).
/// - Throws: `CastError` `.notAuthorised` with the impersonation warning; `.usage` when the store cannot be read.
func checkPinnedIdentity(_ receiver: ReceiverDescription, peerKey: [UInt8]?, configDirectory: String)
    throws(CastError) -> String
{
    guard let peerKey else { throw CastError(.notAuthorised, "\(printable(receiver.name)) presented no Ed25519 key") }
    let peerID = fingerprint(ofPublicKey: peerKey)
    if !receiver.id.isEmpty, receiver.id.lowercased() != peerID {
        throw CastError(.notAuthorised, identityMismatch(receiver.name, announced: receiver.id, presented: peerID))
    }
    let paired: [KnownReceiver]
    do {
        paired = try KnownReceivers.load(directory: configDirectory).list()
    } catch {
        throw CastError(.usage, "cannot read the paired receivers: \(error)")
    }
    if let lead = ReceiverPin(receiver, paired: paired).refusal(of: peerID) {
        let expected = lead.receivers.map(\.id).joined(separator: " or ")
        throw CastError(
            .notAuthorised,
            identityMismatch(lead.receivers[0].name, announced: expected, presented: peerID, because: lead.what))
    }
    return peerID
}

/// Remembers where a paired receiver whose key was just checked was reached, so that its address leads to it
/// (`ReceiverPin`). Best effort: a store that cannot be written costs the pin by address, not the connection.
func recordAddress(of receiver: ReceiverDescription, peerID: String, configDirectory: String) {
    guard receiver.kind == .cast else { return }
    _ = try? KnownReceivers.load(directory: configDirectory).recordAddress(receiver.address, forID: peerID)
}
