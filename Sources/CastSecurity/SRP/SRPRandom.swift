internal import COpenSSL

/// `count` bytes from OpenSSL's CSPRNG (`RAND_bytes`). Its failure (an unseeded generator) must never be
/// papered over with weaker randomness, so it stops the process.
func secureRandomBytes(_ count: Int) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    let ok = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) }
    precondition(ok == 1, "RAND_bytes failed: \(drainOpenSSLErrors())")
    return bytes
}

/// Whether `a == b`, in time that depends only on the lengths (`CRYPTO_memcmp`), for comparing proofs.
func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    if a.isEmpty { return true }
    return a.withUnsafeBytes { x in b.withUnsafeBytes { y in CRYPTO_memcmp(x.baseAddress, y.baseAddress, x.count) } }
        == 0
}
