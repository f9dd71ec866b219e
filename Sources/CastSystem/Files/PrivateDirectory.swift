import Glibc

/// The checks a directory that holds an identity key or a trust store must pass before anything in it is believed
/// (castd's state directory, cast's config directory), as ssh checks `~/.ssh`: whoever can write the directory can
/// replace the key or add a paired sender, so it must be writable by nobody but its owner, and its owner must be
/// this user or root.
package enum PrivateDirectory {
    /// Creates `directory` and any missing parents with mode 0700; existing ones are left as they are.
    package static func create(_ directory: String) throws(SecurityError) {
        var prefix = directory.hasPrefix("/") ? "" : "."
        for component in directory.split(separator: "/") {
            prefix += "/" + component
            if Glibc.mkdir(prefix, 0o700) != 0 {
                let code = errno
                if code != EEXIST {
                    throw SecurityError(.system, function: "mkdir", errno: code, "cannot create directory \(prefix)")
                }
            }
        }
    }

    /// Throws `kind` naming `path`, what is wrong and the fix when `path` exists and is not a directory, is writable
    /// by group or others, or is owned by another user than this one and root. A missing directory passes (it is
    /// created with mode 0700 when something is stored).
    package static func check(_ path: String, kind: SecurityError.Kind) throws(SecurityError) {
        var status = stat()
        guard stat(path, &status) == 0 else {
            let code = errno
            if code == ENOENT { return }
            throw SecurityError(kind, function: "stat", errno: code, "cannot examine directory \(path)")
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw SecurityError(kind, "\(path) is not a directory")
        }
        let user = geteuid()
        if status.st_uid != user && status.st_uid != 0 {
            throw SecurityError(
                kind,
                "directory \(path) is owned by uid \(status.st_uid), not by this user (uid \(user)) or root: that user "
                    + "could replace the keys and pairings in it; refusing it (run: chown \(user) \(path))")
        }
        let mode = status.st_mode & 0o7777
        if mode & 0o022 != 0 {
            throw SecurityError(
                kind,
                "directory \(path) has mode \(octalMode(mode)), which lets group or others write in it and replace the "
                    + "keys and pairings; refusing it (run: chmod go-w \(path))")
        }
    }

    /// Whether a file's owner (from fstat) may be trusted: this user or root.
    static func isTrustedOwner(_ status: stat) -> Bool {
        status.st_uid == geteuid() || status.st_uid == 0
    }
}

/// A file mode as ls and chmod write it, e.g. "0644".
func octalMode(_ mode: mode_t) -> String {
    let digits = String(mode, radix: 8)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}
