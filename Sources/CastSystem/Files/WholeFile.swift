package import Glibc

/// Reading and writing a whole small file through a descriptor, as the key file and the trust
/// stores do: EINTR retried, partial writes continued, and a read bounded so a huge or growing
/// file cannot exhaust memory.
public enum WholeFile {
    /// Reads to the end of `fd`; throws `tooLarge()` once more than `limit` bytes arrived.
    ///
    /// `expected` (the size fstat gave, when known) sizes the read buffer: a file of that size is read in one call
    /// and its end found by the next, in a buffer of the file's size (4 KiB at least) instead of 64 KiB, each of whose
    /// pages the process would fault in to zero it (`cast` reads its key and trust stores at every start).
    package static func read(_ fd: Int32, limit: Int, expected: Int = 65535, tooLarge: () -> SecurityError)
        throws(SecurityError)
        -> [UInt8]
    {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: min(max(expected, 4095), 65535) + 1)
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

    /// Reads a private file whole (the identity key, a trust store): nil when it does not exist. It is opened without
    /// following a symbolic link and without waiting (a FIFO in its place would block the open until someone writes),
    /// and must be a regular file owned by this user or root, that group and others cannot access, of at most `limit`
    /// bytes. Every refusal is a `kind` error that names the file as `what` ("trust store /path"). Returns the bytes
    /// and the file's status as it was opened.
    package static func readPrivate(_ path: String, what: String, kind: SecurityError.Kind, limit: Int)
        throws(SecurityError)
        -> (bytes: [UInt8], status: stat)?
    {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd < 0 {
            let code = errno
            if code == ENOENT { return nil }
            if code == ELOOP { throw SecurityError(kind, "\(what) \(path) is a symbolic link; refusing it") }
            throw SecurityError(kind, function: "open", errno: code, "cannot open \(what) \(path)")
        }
        defer { closeDescriptor(fd) }
        var status = stat()
        try systemCall("fstat") { fstat(fd, &status) }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw SecurityError(kind, "\(what) \(path) is not a regular file; refusing it")
        }
        guard PrivateDirectory.isTrustedOwner(status) else {
            throw SecurityError(
                kind,
                "\(what) \(path) is owned by uid \(status.st_uid), not by this user (uid \(geteuid())) or root; refusing it"
            )
        }
        let mode = status.st_mode & 0o7777
        if mode & 0o077 != 0 {
            throw SecurityError(
                kind,
                "\(what) \(path) has mode \(octalMode(mode)), which lets group or others access it; "
                    + "it must be 0600 (run: chmod 600 \(path))")
        }
        if status.st_size > limit {
            throw SecurityError(kind, "\(what) \(path) is \(status.st_size) bytes, more than the \(limit) allowed")
        }
        let bytes = try read(fd, limit: limit, expected: Int(status.st_size)) {
            SecurityError(kind, "\(what) \(path) is larger than \(limit) bytes")
        }
        return (bytes, status)
    }

    /// Writes all of `bytes` to `fd` (also `cast`'s output).
    public static func write(_ fd: Int32, _ bytes: [UInt8]) throws(SecurityError) {
        var offset = 0
        while offset < bytes.count {
            offset += try systemCall("write") {
                bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            }
        }
    }

    /// Replaces the file at `path` (in `directory`) by `bytes`, atomically: a temporary file beside it (mode 0600,
    /// never following a link), synced and renamed over it, then the directory synced (best effort: some file systems
    /// cannot). A crash leaves the old contents or the new ones, never a mix. Errors say `what` could not be written.
    package static func replace(
        _ path: String, in directory: String, with bytes: [UInt8], what: String
    ) throws(SecurityError) {
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
                try write(fd, bytes)
                try systemCall("fsync") { fsync(fd) }
            }
            try systemCall("rename") { rename(temporary, path) }
            renamed = true
        } catch {
            throw SecurityError(
                error.kind, function: error.function, errno: error.errno, "cannot write \(what) \(path)")
        }
        let directoryFD = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            closeDescriptor(directoryFD)
        }
    }
}
