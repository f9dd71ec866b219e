internal import COpenSSL

// BIGNUM arithmetic for SRP. With the fixed, valid groups used here every BN call can fail only when memory
// runs out, which is our own impossible state rather than a peer's doing: such failures stop the process
// (`precondition`) instead of turning every SRP step into a throwing call. Peer-supplied values are range
// checked by the callers before they reach any arithmetic.

/// An owned `BIGNUM`, cleared (`BN_clear_free`) when freed because many of them hold secrets (a, b, x, S).
///
/// Not Sendable: a BIGNUM is mutable C state; each SRP session owns its own.
final class BigNumber {
    let pointer: OpaquePointer

    /// Zero.
    init() {
        guard let pointer = BN_new() else { fatalOpenSSL("BN_new") }
        self.pointer = pointer
    }

    /// The unsigned big-endian integer `bytes` (leading zeros allowed; empty is zero).
    convenience init(bytes: [UInt8]) {
        self.init()
        let result = bytes.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), pointer) }
        if result == nil { fatalOpenSSL("BN_bin2bn") }
    }

    /// A small value, e.g. a generator.
    convenience init(word: UInt) {
        self.init()
        check(BN_set_word(pointer, UInt(word)), "BN_set_word")
    }

    deinit { BN_clear_free(pointer) }

    /// Marks the value as secret: exponentiations with it as exponent take OpenSSL's constant-time path.
    func markSecret() {
        BN_set_flags(pointer, BN_FLG_CONSTTIME)
    }

    /// The minimal big-endian bytes (no leading zeros; zero is empty).
    var bytes: [UInt8] {
        var out = [UInt8](repeating: 0, count: byteCount)
        let written = out.withUnsafeMutableBufferPointer { BN_bn2bin(pointer, $0.baseAddress) }
        precondition(Int(written) == out.count, "BN_bn2bin wrote \(written) of \(out.count) bytes")
        return out
    }

    /// The big-endian bytes left-padded with zeros to exactly `length` (RFC 5054's PAD()).
    func bytes(paddedTo length: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        let written = out.withUnsafeMutableBufferPointer { BN_bn2binpad(pointer, $0.baseAddress, Int32(length)) }
        precondition(Int(written) == length, "value does not fit in \(length) bytes")
        return out
    }

    /// The length of `bytes`.
    var byteCount: Int { (Int(BN_num_bits(pointer)) + 7) / 8 }

    /// Whether the value is zero.
    var isZero: Bool { BN_is_zero(pointer) == 1 }

    /// Compares magnitudes: negative, zero or positive like `memcmp`.
    func compare(_ other: BigNumber) -> Int32 { BN_cmp(pointer, other.pointer) }
}

/// An owned `BN_CTX`, the scratch space for BIGNUM operations. Not Sendable, like `BigNumber`.
final class BigNumberContext {
    let pointer: OpaquePointer

    init() {
        guard let pointer = BN_CTX_new() else { fatalOpenSSL("BN_CTX_new") }
        self.pointer = pointer
    }

    deinit { BN_CTX_free(pointer) }

    /// `base ^ exponent mod modulus` (constant time when `exponent` is marked secret).
    func modExp(_ base: BigNumber, _ exponent: BigNumber, _ modulus: BigNumber) -> BigNumber {
        let result = BigNumber()
        check(BN_mod_exp(result.pointer, base.pointer, exponent.pointer, modulus.pointer, pointer), "BN_mod_exp")
        return result
    }

    /// `a * b mod modulus`.
    func modMul(_ a: BigNumber, _ b: BigNumber, _ modulus: BigNumber) -> BigNumber {
        let result = BigNumber()
        check(BN_mod_mul(result.pointer, a.pointer, b.pointer, modulus.pointer, pointer), "BN_mod_mul")
        return result
    }

    /// `a + b mod modulus`.
    func modAdd(_ a: BigNumber, _ b: BigNumber, _ modulus: BigNumber) -> BigNumber {
        let result = BigNumber()
        check(BN_mod_add(result.pointer, a.pointer, b.pointer, modulus.pointer, pointer), "BN_mod_add")
        return result
    }

    /// `a - b mod modulus`, in `0..<modulus`.
    func modSub(_ a: BigNumber, _ b: BigNumber, _ modulus: BigNumber) -> BigNumber {
        let result = BigNumber()
        check(BN_mod_sub(result.pointer, a.pointer, b.pointer, modulus.pointer, pointer), "BN_mod_sub")
        return result
    }

    /// `a mod modulus`, in `0..<modulus`.
    func mod(_ a: BigNumber, _ modulus: BigNumber) -> BigNumber {
        let result = BigNumber()
        check(BN_nnmod(result.pointer, a.pointer, modulus.pointer, pointer), "BN_nnmod")
        return result
    }

    /// `a * b` (no reduction).
    func mul(_ a: BigNumber, _ b: BigNumber) -> BigNumber {
        let result = BigNumber()
        check(BN_mul(result.pointer, a.pointer, b.pointer, pointer), "BN_mul")
        return result
    }

    /// `a + b` (no reduction).
    func add(_ a: BigNumber, _ b: BigNumber) -> BigNumber {
        let result = BigNumber()
        check(BN_add(result.pointer, a.pointer, b.pointer), "BN_add")
        return result
    }
}

/// Stops unless a BN call returned OpenSSL's success value 1 (see the note at the top of this file).
private func check(_ result: Int32, _ function: String) {
    if result != 1 { fatalOpenSSL(function) }
}

private func fatalOpenSSL(_ function: String) -> Never {
    preconditionFailure("\(function) failed: \(drainOpenSSLErrors())")
}
