import Glibc

/// The receiver's count of failed pairing attempts in a row, kept in its state directory (`pairing-failures`, one
/// decimal number), so that a restart of castd does not hand a guesser a fresh set of attempts: only the operator's
/// reopening (SIGHUP) clears it.
///
/// A file of its own beside the pairing store, written whole to a temporary file, synced and renamed over the old
/// one: a crash leaves the old count or the new one, and the pairing store is never opened for it.
public enum PairingFailureCount {
    /// The file's name in the state directory.
    public static let fileName = "pairing-failures"
    /// The most bytes the file may hold (a number and a line break).
    static let maximumFileSize = 32

    /// The stored count: 0 when there is no file yet.
    /// - Throws: `SecurityError` `.trustStore` when the file cannot be read, is not private (mode 0600, this user's),
    ///   or does not hold a count: the caller counts pairing as closed then, rather than trust it open.
    public static func read(directory: String) throws(SecurityError) -> Int {
        let path = "\(directory)/\(fileName)"
        guard
            let (bytes, _) = try WholeFile.readPrivate(
                path, what: "pairing failure count", kind: .trustStore, limit: maximumFileSize)
        else { return 0 }
        let digits = bytes.last == UInt8(ascii: "\n") ? bytes.dropLast() : bytes[...]
        guard let count = Int(String(decoding: digits, as: UTF8.self)), count >= 0 else {
            throw SecurityError(.trustStore, "pairing failure count \(path) does not hold a count")
        }
        return count
    }

    /// Replaces the stored count by `count`, atomically (temporary file, fsync, rename, then the directory synced).
    public static func write(_ count: Int, directory: String) throws(SecurityError) {
        precondition(count >= 0, "a count of failures is never negative")
        let path = "\(directory)/\(fileName)"
        let temporary = "\(path).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        do throws(SecurityError) {
            let fd = try systemCall("open") {
                Glibc.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            }
            var renamed = false
            defer { if !renamed { unlink(temporary) } }
            do {
                defer { closeDescriptor(fd) }
                try systemCall("fchmod") { fchmod(fd, 0o600) }
                try WholeFile.write(fd, Array("\(count)\n".utf8))
                try systemCall("fsync") { fsync(fd) }
            }
            try systemCall("rename") { rename(temporary, path) }
            renamed = true
        } catch {
            throw SecurityError(
                error.kind, function: error.function, errno: error.errno, "cannot write pairing failure count \(path)")
        }
        let directoryFD = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            closeDescriptor(directoryFD)
        }
    }
}
