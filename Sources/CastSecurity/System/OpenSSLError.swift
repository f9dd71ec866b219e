internal import COpenSSL

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
