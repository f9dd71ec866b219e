import Glibc

/// Starting a helper process (castd's decoder workers, `cast`'s speaker decoder): `posix_spawn` with the descriptors
/// the child needs and every signal unblocked in it (the calling thread's mask is inherited otherwise, and castd's
/// signal thread blocks some).
public enum ProcessSpawn {
    /// What to do with a descriptor in the child, in order.
    public enum Descriptor: Sendable {
        /// `dup2(from, to)`.
        case duplicate(Int32, to: Int32)
        /// Opens /dev/null for reading as `fd`.
        case nullInput(Int32)
    }

    /// Starts `path` with `arguments` (the first is the child's `argv[0]`) and this process's environment; returns its
    /// pid.
    /// - Throws: `SecurityError` `.system` naming `posix_spawn` and its error.
    public static func spawn(
        _ path: String, arguments: [String], descriptors: [Descriptor], environment: [String]? = nil
    ) throws(SecurityError) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor in descriptors {
            switch descriptor {
            case .duplicate(let from, let to): posix_spawn_file_actions_adddup2(&actions, from, to)
            case .nullInput(let fd): posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDONLY, 0)
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        var envp: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup($0) } + [nil] }
        defer { for pointer in envp ?? [] { free(pointer) } }
        let status =
            envp == nil
            ? posix_spawn(&pid, path, &actions, &attributes, &argv, environ)
            : posix_spawn(&pid, path, &actions, &attributes, &argv, &envp!)
        guard status == 0 else {
            throw SecurityError(.system, function: "posix_spawn", errno: status, "cannot start \(path)")
        }
        return pid
    }
}
