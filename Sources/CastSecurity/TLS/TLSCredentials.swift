internal import COpenSSL
import CastSystem
import Synchronization

/// What an identity needs to speak TLS: its key, a self-signed certificate for it (`SelfSignedCertificate`) and one configured
/// `SSL_CTX` per role, each made the first time it is used and kept, because `SSL_CTX_new` is slow in OpenSSL 3
/// (`cast` only ever needs the client's, castd the server's).
///
/// Thread-safety: `key` and `certificate` never change after `init`, and the contexts are made and read inside their
/// `Mutex`; the handles themselves say why they may be shared (`OpenSSLHandles.swift`).
final class TLSCredentials: Sendable {
    let key: PrivateKey
    let certificate: Certificate
    private let contexts = Mutex<(server: SSLContext?, client: SSLContext?)>((nil, nil))

    init(key: PrivateKey, commonName: String) throws {
        self.key = key
        certificate = try SelfSignedCertificate.make(key: key, commonName: commonName)
    }

    /// The context of one side of a handshake (the server's or the client's), made the first time it is asked for.
    func context(server: Bool) throws -> SSLContext {
        try contexts.withLock { contexts in
            if let made = server ? contexts.server : contexts.client { return made }
            let made = try Self.context(key: key, certificate: certificate)
            if server { contexts.server = made } else { contexts.client = made }
            return made
        }
    }

    /// A TLS 1.3-only context presenting `certificate`, asking the peer for its certificate and accepting any.
    ///
    /// `SSL_VERIFY_PEER` without `SSL_VERIFY_FAIL_IF_NO_PEER_CERT` makes a server *request* a client
    /// certificate without requiring one; the callback accepts every certificate because trust is decided by
    /// the caller pinning `TLSConnection.peerPublicKey`, not by a CA chain.
    private static func context(key: PrivateKey, certificate: Certificate) throws -> SSLContext {
        guard let pointer = SSL_CTX_new(TLS_method()) else {
            throw SecurityError.openSSL("SSL_CTX_new", "out of memory")
        }
        let context = SSLContext(owning: pointer)
        let version = cast_tls1_3_version()
        guard cast_SSL_CTX_set_min_proto_version(pointer, version) == 1,
            cast_SSL_CTX_set_max_proto_version(pointer, version) == 1
        else { throw SecurityError.openSSL("SSL_CTX_set_min/max_proto_version", "cannot restrict to TLS 1.3") }
        try requireOne(
            SSL_CTX_use_certificate(pointer, certificate.pointer), "SSL_CTX_use_certificate", "bad certificate")
        try requireOne(SSL_CTX_use_PrivateKey(pointer, key.pointer), "SSL_CTX_use_PrivateKey", "bad private key")
        try requireOne(
            SSL_CTX_check_private_key(pointer), "SSL_CTX_check_private_key", "key does not match certificate")
        SSL_CTX_set_verify(pointer, SSL_VERIFY_PEER) { _, _ in 1 }
        // No session tickets: without resumption every connection presents (and pins) real certificates.
        try requireOne(SSL_CTX_set_num_tickets(pointer, 0), "SSL_CTX_set_num_tickets", "cannot disable tickets")
        // A TCP FIN without close_notify reads as end of stream; framing above TLS detects truncation.
        _ = SSL_CTX_set_options(pointer, cast_ssl_op_ignore_unexpected_eof() | cast_ssl_op_no_renegotiation())
        // A write retried after WANT_WRITE may come from a different (copied) Swift buffer.
        _ = cast_SSL_CTX_set_mode(pointer, cast_ssl_mode_accept_moving_write_buffer())
        return context
    }
}
