public import CastSystem
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
        try WholeFile.replace(
            "\(directory)/\(fileName)", in: directory, with: Array("\(count)\n".utf8), what: "pairing failure count")
    }
}
