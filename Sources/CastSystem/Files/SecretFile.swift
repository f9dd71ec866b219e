import Glibc

/// A small secret read whole from a file the operator names (castd's `--password-file`, cast's `--user-file`).
public enum SecretFile {
    /// Reads `path`, which must be a regular file of at most `limit` bytes that group and others cannot access. It is
    /// opened without waiting, so a FIFO in its place is refused at once instead of blocking castd's start until
    /// someone writes to it.
    /// - Throws: `.keyFile` naming the file and what is wrong with it.
    public static func read(_ path: String, limit: Int) throws -> [UInt8] {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 {
            throw SecurityError(.keyFile, function: "open", errno: errno, "cannot open \(path)")
        }
        defer { closeDescriptor(fd) }
        var status = stat()
        try systemCall("fstat") { fstat(fd, &status) }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw SecurityError(.keyFile, "\(path) is not a regular file")
        }
        // As ssh refuses a private key others can read: a secret anyone on the machine may read is no secret.
        let mode = status.st_mode & 0o7777
        if mode & 0o077 != 0 {
            throw SecurityError(
                .keyFile,
                "\(path) has mode \(octalMode(mode)), which lets group or others access it; "
                    + "it must be 0600 or stricter (run: chmod 600 \(path))")
        }
        return try WholeFile.read(fd, limit: limit) { SecurityError(.keyFile, "\(path) is larger than \(limit) bytes") }
    }
}
