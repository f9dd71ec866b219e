internal import COpenSSL
import Synchronization

/// What an identity needs to speak TLS: its key, a self-signed certificate for it and one configured
/// `SSL_CTX` per role, each made the first time it is used and kept, because `SSL_CTX_new` is slow in OpenSSL 3
/// (`cast` only ever needs the client's, castd the server's).
///
/// `@unchecked Sendable`: `key` and `certificate` are immutable after `init`, the contexts are made and read inside
/// their `Mutex`, and each wrapped handle is documented as safe for concurrent read-only use (see the handle classes).
final class TLSCredentials: @unchecked Sendable {
    let key: PrivateKey
    let certificate: Certificate
    private let contexts = Mutex<(server: SSLContext?, client: SSLContext?)>((nil, nil))

    init(key: PrivateKey, commonName: String) throws {
        self.key = key
        certificate = try Self.selfSignedCertificate(key: key, commonName: commonName)
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

    /// An X.509 v3 certificate for `key`, signed by itself, CN = `commonName`, valid from a day ago for 20 years.
    /// Its only purpose is to carry the public key through the TLS handshake; nobody validates it.
    private static func selfSignedCertificate(key: PrivateKey, commonName: String) throws -> Certificate {
        guard let x509 = X509_new() else { throw SecurityError.openSSL("X509_new", "out of memory") }
        let certificate = Certificate(owning: x509)
        try requireOne(X509_set_version(x509, 2), "X509_set_version", "cannot build the certificate")

        var serial = [UInt8](repeating: 0, count: 16)
        try requireOne(RAND_bytes(&serial, Int32(serial.count)), "RAND_bytes", "no randomness for the serial number")
        serial[0] &= 0x7f  // positive
        guard let number = BN_bin2bn(serial, Int32(serial.count), nil) else {
            throw SecurityError.openSSL("BN_bin2bn", "out of memory")
        }
        defer { BN_free(number) }
        guard BN_to_ASN1_INTEGER(number, X509_get_serialNumber(x509)) != nil else {
            throw SecurityError.openSSL("BN_to_ASN1_INTEGER", "cannot set the serial number")
        }

        let day = 24 * 60 * 60
        guard X509_gmtime_adj(X509_getm_notBefore(x509), -day) != nil,
            X509_gmtime_adj(X509_getm_notAfter(x509), (20 * 365 + 5) * day) != nil
        else { throw SecurityError.openSSL("X509_gmtime_adj", "cannot set the validity period") }

        guard let name = X509_get_subject_name(x509) else {
            throw SecurityError.openSSL("X509_get_subject_name", "cannot build the certificate")
        }
        try requireOne(
            X509_NAME_add_entry_by_txt(name, "CN", cast_mbstring_asc(), commonName, -1, -1, 0),
            "X509_NAME_add_entry_by_txt", "cannot set the common name")
        try requireOne(X509_set_issuer_name(x509, name), "X509_set_issuer_name", "cannot set the issuer")
        try requireOne(X509_set_pubkey(x509, key.pointer), "X509_set_pubkey", "cannot set the public key")
        // Ed25519 signs the whole message itself, so the digest must be NULL.
        guard X509_sign(x509, key.pointer, nil) > 0 else {
            throw SecurityError.openSSL("X509_sign", "cannot sign the certificate")
        }
        return certificate
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
