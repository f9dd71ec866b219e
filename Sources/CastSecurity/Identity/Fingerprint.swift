internal import COpenSSL

/// The short identifier of an Ed25519 public key, as published in DNS-SD (`id=`) and shown to users:
/// lowercase hex of the first 16 bytes of SHA-256(`publicKey`), so always 32 characters.
public func fingerprint(ofPublicKey publicKey: [UInt8]) -> String {
    var digest = [UInt8](repeating: 0, count: 32)
    var length: UInt32 = 0
    let ok = publicKey.withUnsafeBytes { input in
        EVP_Digest(input.baseAddress, input.count, &digest, &length, EVP_sha256(), nil)
    }
    // SHA-256 over a memory buffer cannot fail short of OpenSSL being unusable.
    precondition(ok == 1 && length == 32, "EVP_Digest(SHA-256) failed: \(drainOpenSSLErrors())")
    let hexDigits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(32)
    for byte in digest.prefix(16) {
        text.append(hexDigits[Int(byte >> 4)])
        text.append(hexDigits[Int(byte & 0x0f)])
    }
    return String(decoding: text, as: UTF8.self)
}
