internal import COpenSSL

/// The hash function H of an SRP session.
///
/// Cast pairs with `.sha512`; `.sha1` exists only to check the RFC 5054 test vectors.
public struct SRPHash: Sendable, Hashable, CustomStringConvertible {
    private enum Code: Sendable, Hashable {
        case sha1, sha512
    }

    private let code: Code

    /// SHA-512, as in HomeKit pairing: what Cast uses.
    public static let sha512 = SRPHash(code: .sha512)
    /// SHA-1, as in RFC 5054's test vectors. Do not pair with it.
    public static let sha1 = SRPHash(code: .sha1)

    /// The hash's name, e.g. `SHA-512`.
    public var description: String {
        switch code {
        case .sha1: "SHA-1"
        case .sha512: "SHA-512"
        }
    }

    /// The digest length in bytes.
    public var outputCount: Int {
        switch code {
        case .sha1: 20
        case .sha512: 64
        }
    }

    /// H(parts[0] | parts[1] | ...): the digest of the concatenation.
    func callAsFunction(_ parts: [UInt8]...) -> [UInt8] {
        digest(parts)
    }

    /// The digest of the concatenation of `parts`.
    func digest(_ parts: [[UInt8]]) -> [UInt8] {
        let algorithm =
            switch code {
            case .sha1: EVP_sha1()
            case .sha512: EVP_sha512()
            }
        // Hashing memory can fail only when OpenSSL itself is unusable (no memory): our impossible state.
        guard let context = EVP_MD_CTX_new() else { preconditionFailure("EVP_MD_CTX_new failed") }
        defer { EVP_MD_CTX_free(context) }
        precondition(EVP_DigestInit_ex(context, algorithm, nil) == 1, "EVP_DigestInit_ex: \(drainOpenSSLErrors())")
        for part in parts {
            let ok = part.withUnsafeBytes { EVP_DigestUpdate(context, $0.baseAddress, $0.count) }
            precondition(ok == 1, "EVP_DigestUpdate: \(drainOpenSSLErrors())")
        }
        var output = [UInt8](repeating: 0, count: outputCount)
        var length: UInt32 = 0
        precondition(
            EVP_DigestFinal_ex(context, &output, &length) == 1 && Int(length) == outputCount,
            "EVP_DigestFinal_ex: \(drainOpenSSLErrors())")
        return output
    }
}
