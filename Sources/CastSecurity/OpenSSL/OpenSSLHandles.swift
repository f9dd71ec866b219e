internal import COpenSSL
import CastSystem

// The owning wrappers for OpenSSL's C handles live together here: each is a few lines whose only job
// is to free its pointer in `deinit`, and reading them side by side makes ownership easy to check.

/// An owned `EVP_PKEY` (always Ed25519 in this module).
///
/// `@unchecked Sendable`: the key is never mutated after creation, and OpenSSL 3 allows concurrent
/// read-only use of one `EVP_PKEY` (signing with separate contexts, up-referencing) from many threads.
final class PrivateKey: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Takes ownership of `pointer`.
    init(owning pointer: OpaquePointer) { self.pointer = pointer }
    deinit { EVP_PKEY_free(pointer) }

    /// A fresh Ed25519 key from OpenSSL's default random source.
    static func generateEd25519() throws -> PrivateKey {
        guard let context = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nil) else {
            throw SecurityError.openSSL("EVP_PKEY_CTX_new_id", "cannot create an Ed25519 key context")
        }
        defer { EVP_PKEY_CTX_free(context) }
        try requireOne(EVP_PKEY_keygen_init(context), "EVP_PKEY_keygen_init", "cannot start Ed25519 key generation")
        var key: OpaquePointer?
        try requireOne(EVP_PKEY_keygen(context, &key), "EVP_PKEY_keygen", "cannot generate an Ed25519 key")
        guard let key else { throw SecurityError.openSSL("EVP_PKEY_keygen", "no key returned") }
        return PrivateKey(owning: key)
    }

    /// The 32 raw bytes of the Ed25519 public key.
    func rawPublicKey() throws -> [UInt8] {
        guard let raw = rawEd25519PublicKey(of: pointer) else {
            throw SecurityError(.keyFile, function: "EVP_PKEY_get_raw_public_key", "the key is not an Ed25519 key")
        }
        return raw
    }
}

/// The raw 32-byte public key of an Ed25519 `EVP_PKEY`, or `nil` for any other key type.
func rawEd25519PublicKey(of key: OpaquePointer) -> [UInt8]? {
    guard EVP_PKEY_get_id(key) == EVP_PKEY_ED25519 else { return nil }
    var length = 32
    var raw = [UInt8](repeating: 0, count: length)
    guard EVP_PKEY_get_raw_public_key(key, &raw, &length) == 1, length == 32 else {
        ERR_clear_error()
        return nil
    }
    return raw
}

/// An owned `X509` certificate.
///
/// `@unchecked Sendable`: never mutated after it is signed; `SSL_CTX_use_certificate` only up-references it.
final class Certificate: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Takes ownership of `pointer`.
    init(owning pointer: OpaquePointer) { self.pointer = pointer }
    deinit { X509_free(pointer) }

    /// The certificate as OpenSSL writes it (DER).
    var der: [UInt8] {
        let count = i2d_X509(pointer, nil)
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: Int(count))
        bytes.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            _ = i2d_X509(pointer, &cursor)
        }
        return bytes
    }
}

/// An owned `SSL_CTX`.
///
/// `@unchecked Sendable`: fully configured in `TLSCredentials.init` and never changed afterwards;
/// OpenSSL documents a configured `SSL_CTX` as safe to share for `SSL_new` from many threads.
final class SSLContext: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Takes ownership of `pointer`.
    init(owning pointer: OpaquePointer) { self.pointer = pointer }
    deinit { SSL_CTX_free(pointer) }
}

/// An owned `SSL` (one TLS session). Not Sendable: `TLSConnection` serialises every use behind its lock.
final class SSLSession {
    let pointer: OpaquePointer

    /// Takes ownership of `pointer` (and of any BIO already attached to it).
    init(owning pointer: OpaquePointer) { self.pointer = pointer }
    deinit { SSL_free(pointer) }
}

/// An owned memory `BIO`, used to move PEM text in and out of OpenSSL.
final class MemoryBIO {
    let pointer: OpaquePointer

    /// An empty, writable memory BIO.
    init() throws {
        guard let bio = BIO_new(BIO_s_mem()) else { throw SecurityError.openSSL("BIO_new", "out of memory") }
        pointer = bio
    }

    /// A read-only memory BIO over a copy of `bytes`.
    init(copying bytes: [UInt8]) throws {
        // BIO_new_mem_buf does not copy, so write into a normal memory BIO instead.
        guard let bio = BIO_new(BIO_s_mem()) else { throw SecurityError.openSSL("BIO_new", "out of memory") }
        pointer = bio
        let written = bytes.withUnsafeBytes { BIO_write(bio, $0.baseAddress, Int32($0.count)) }
        guard written == Int32(bytes.count) else { throw SecurityError.openSSL("BIO_write", "cannot buffer the key") }
    }

    deinit { BIO_free(pointer) }

    /// Everything written so far.
    var contents: [UInt8] {
        var data: UnsafeMutablePointer<CChar>?
        let count = cast_BIO_get_mem_data(pointer, &data)
        guard let data, count > 0 else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: count) {
            Array(UnsafeBufferPointer(start: $0, count: count))
        }
    }
}
