internal import COpenSSL
import CastSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The self-signed X.509 v3 certificate that carries an Ed25519 identity through the TLS handshake, written as DER
/// here and parsed once by OpenSSL.
///
/// Its only purpose is to carry the public key; nobody validates it (trust is the pinned key, docs/security.md). It
/// is written by hand because OpenSSL 3 sets a certificate's public key through its encoder framework, whose first
/// use builds every encoder of every provider: 3.3 M instructions of `cast`'s start-up for the 44 bytes of an Ed25519
/// SubjectPublicKeyInfo (RFC 8410), whose form never changes. The signature is OpenSSL's (`EVP_DigestSign`).
///
/// The fields are those `X509_sign` wrote before: version 3, a random positive 16-byte serial number, CN = the
/// common name as issuer and subject, valid from a day ago for 20 years, no extensions.
enum SelfSignedCertificate {
    /// id-Ed25519, 1.3.101.112 (RFC 8410), as an AlgorithmIdentifier without parameters.
    static let ed25519Algorithm: [UInt8] = [0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70]
    /// id-at-commonName, 2.5.4.3.
    static let commonNameOID: [UInt8] = [0x06, 0x03, 0x55, 0x04, 0x03]

    /// The certificate of `key` (an Ed25519 key), parsed by OpenSSL.
    static func make(key: PrivateKey, commonName: String, now: time_t = time(nil)) throws -> Certificate {
        var serial = [UInt8](repeating: 0, count: 16)
        try requireOne(RAND_bytes(&serial, Int32(serial.count)), "RAND_bytes", "no randomness for the serial number")
        serial[0] = (serial[0] & 0x7f) | 0x40  // positive, and no leading zero byte to strip (DER's minimal form)
        let day = 24 * 60 * 60
        let tbs = try toBeSigned(
            publicKey: key.rawPublicKey(), serial: serial, commonName: commonName,
            notBefore: now - time_t(day), notAfter: now + time_t((20 * 365 + 5) * day))
        let signature = try sign(tbs, with: key)
        let der = DER.sequence(tbs + ed25519Algorithm + DER.bitString(signature))
        let parsed = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor = buffer.baseAddress
            return d2i_X509(nil, &cursor, buffer.count)
        }
        guard let parsed else { throw SecurityError.openSSL("d2i_X509", "cannot read the certificate just written") }
        return Certificate(owning: parsed)
    }

    /// The TBSCertificate (RFC 5280, 4.1) of an Ed25519 key: what the signature covers.
    static func toBeSigned(
        publicKey: [UInt8], serial: [UInt8], commonName: String, notBefore: time_t, notAfter: time_t
    ) -> [UInt8] {
        let name = DER.sequence(DER.set(DER.sequence(commonNameOID + DER.utf8String(commonName))))
        let version = DER.element(0xa0, DER.integer([2]))  // [0] EXPLICIT, v3
        let validity = DER.sequence(DER.time(notBefore) + DER.time(notAfter))
        let subjectPublicKeyInfo = DER.sequence(ed25519Algorithm + DER.bitString(publicKey))
        return DER.sequence(
            version + DER.integer(serial) + ed25519Algorithm + name + validity + name + subjectPublicKeyInfo)
    }

    /// Ed25519's signature of `message` (PureEdDSA: the whole message, no digest).
    private static func sign(_ message: [UInt8], with key: PrivateKey) throws -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw SecurityError.openSSL("EVP_MD_CTX_new", "out of memory") }
        defer { EVP_MD_CTX_free(context) }
        try requireOne(
            EVP_DigestSignInit(context, nil, nil, nil, key.pointer), "EVP_DigestSignInit", "cannot sign the certificate"
        )
        var signature = [UInt8](repeating: 0, count: 64)
        var length = signature.count
        try requireOne(
            EVP_DigestSign(context, &signature, &length, message, message.count), "EVP_DigestSign",
            "cannot sign the certificate")
        guard length == 64 else { throw SecurityError.openSSL("EVP_DigestSign", "not an Ed25519 signature") }
        return signature
    }
}

/// The few DER (X.690) encodings a certificate needs: definite lengths, minimal forms.
enum DER {
    /// A tag, the length of `content` and `content`.
    static func element(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        [tag] + length(content.count) + content
    }

    static func sequence(_ content: [UInt8]) -> [UInt8] { element(0x30, content) }
    static func set(_ content: [UInt8]) -> [UInt8] { element(0x31, content) }
    static func utf8String(_ text: String) -> [UInt8] { element(0x0c, Array(text.utf8)) }
    /// A BIT STRING of whole bytes (no unused bits).
    static func bitString(_ bytes: [UInt8]) -> [UInt8] { element(0x03, [0] + bytes) }

    /// An INTEGER from its big-endian two's-complement bytes, which the caller keeps minimal.
    static func integer(_ bytes: [UInt8]) -> [UInt8] { element(0x02, bytes) }

    /// The length octets: short form below 128, else the long form's count byte and the big-endian length.
    static func length(_ count: Int) -> [UInt8] {
        guard count >= 0x80 else { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var rest = count
        while rest > 0 {
            bytes.insert(UInt8(rest & 0xff), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    /// A certificate's time (RFC 5280, 4.1.2.5): UTCTime `YYMMDDHHMMSSZ` through 2049, GeneralizedTime
    /// `YYYYMMDDHHMMSSZ` from 2050 on.
    static func time(_ seconds: time_t) -> [UInt8] {
        var value = seconds
        var fields = tm()
        gmtime_r(&value, &fields)
        let year = Int(fields.tm_year) + 1900
        func two(_ number: Int32) -> String { number < 10 ? "0\(number)" : "\(number)" }
        let rest =
            two(fields.tm_mon + 1) + two(fields.tm_mday) + two(fields.tm_hour) + two(fields.tm_min)
            + two(fields.tm_sec) + "Z"
        if (1950..<2050).contains(year) { return element(0x17, Array((two(Int32(year % 100)) + rest).utf8)) }
        return element(0x18, Array((String(year) + rest).utf8))
    }
}
