import Glibc

/// Reading and writing a whole small file through a descriptor, as the key file and the trust
/// stores do: EINTR retried, partial writes continued, and a read bounded so a huge or growing
/// file cannot exhaust memory.
enum WholeFile {
    /// Reads to the end of `fd`; throws `tooLarge()` once more than `limit` bytes arrived.
    static func read(_ fd: Int32, limit: Int, tooLarge: () -> SecurityError) throws(SecurityError) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = try systemCall("read") {
                chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            }
            if count == 0 { return bytes }
            bytes += chunk[0..<count]
            // The file may have grown after fstat; the bound holds regardless.
            if bytes.count > limit { throw tooLarge() }
        }
    }

    /// Writes all of `bytes` to `fd`.
    static func write(_ fd: Int32, _ bytes: [UInt8]) throws(SecurityError) {
        var offset = 0
        while offset < bytes.count {
            offset += try systemCall("write") {
                bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            }
        }
    }
}
