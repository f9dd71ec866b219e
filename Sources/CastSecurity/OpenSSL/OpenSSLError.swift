internal import COpenSSL
import CastSystem

/// Drains this thread's OpenSSL error queue into one line, e.g.
/// "error:0A00010B:SSL routines::wrong version number". Empty when the queue was empty.
func drainOpenSSLErrors() -> String {
    var parts: [String] = []
    while true {
        let code = ERR_get_error()
        if code == 0 { break }
        var buffer = [CChar](repeating: 0, count: 256)
        buffer.withUnsafeMutableBufferPointer { pointer in
            ERR_error_string_n(code, pointer.baseAddress, pointer.count)
        }
        parts.append(buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
    }
    return parts.joined(separator: "; ")
}

extension SecurityError {
    /// A `.tls` error for a failed OpenSSL call, carrying OpenSSL's error string.
    static func openSSL(_ function: String, _ what: String) -> SecurityError {
        let details = drainOpenSSLErrors()
        return SecurityError(.tls, function: function, details.isEmpty ? what : "\(what): \(details)")
    }
}

/// Throws `.tls` naming `function` unless `result` is OpenSSL's success value 1.
func requireOne(_ result: Int32, _ function: String, _ what: String) throws {
    if result != 1 { throw SecurityError.openSSL(function, what) }
}

/// Starts OpenSSL for a program that ends by exiting, before its first other OpenSSL call: without the clean-up
/// OpenSSL otherwise registers with `atexit` (`OPENSSL_INIT_NO_ATEXIT`).
///
/// That clean-up frees every table OpenSSL built, 1.5 M instructions at the end of every `cast` command (a quarter
/// of a `cast status`'s OpenSSL start-up), memory the kernel takes back at once anyway; and in castd it would free
/// them under a connection thread that is still in a handshake when the process exits. A library (CastKit) does not
/// call it: the program that links it owns its exit.
public func startOpenSSLWithoutExitCleanUp() {
    _ = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil)
}
