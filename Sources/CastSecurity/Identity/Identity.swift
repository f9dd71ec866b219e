internal import COpenSSL

/// A long-term Ed25519 identity: the key a receiver or sender proves itself with.
///
/// Stored as PEM (PKCS#8, unencrypted) in `<directory>/identity.pem` with mode 0600. Trust in an identity
/// comes from pairing and pinning its `publicKey`, never from a certificate authority.
public struct Identity: Sendable {
    /// The name of the key file inside the state directory.
    public static let fileName = "identity.pem"

    /// The 32 raw bytes of the Ed25519 public key.
    public let publicKey: [UInt8]

    /// The private key and the self-signed certificate and TLS contexts built from it.
    let credentials: TLSCredentials

    /// The identity's short id: lowercase hex of the first 16 bytes of SHA-256(`publicKey`), 32 characters.
    public var fingerprint: String { CastSecurity.fingerprint(ofPublicKey: publicKey) }

    init(key: PrivateKey) throws {
        publicKey = try key.rawPublicKey()
        credentials = try TLSCredentials(key: key, commonName: CastSecurity.fingerprint(ofPublicKey: publicKey))
    }

    /// Loads `<directory>/identity.pem`, or on first use creates `directory` (mode 0700, with parents)
    /// and a fresh key (mode 0600, written to a temporary file and then linked into place, so a crash never
    /// leaves a half-written key and two processes starting at once end up with the same key).
    ///
    /// A key file whose mode grants anything to group or others is refused with a `.keyFile` error naming
    /// the file and its mode, as ssh does; so is a file that is not an Ed25519 private key.
    public static func loadOrCreate(directory: String) throws -> Identity {
        try Identity(key: KeyFile(directory: directory).loadOrCreate())
    }

    /// A fresh identity that lives only in memory, for tests and one-shot tools.
    public static func ephemeral() throws -> Identity {
        try Identity(key: PrivateKey.generateEd25519())
    }
}
