internal import CSandbox
import Foundation
import Glibc

/// What castd asks of a decoder worker's sandbox (the `confine` message): what the worker must not see, castd's
/// state directory with the identity key and the trust store, and its password file; and whether it gets a network of
/// its own. Bounded, as everything on the channel.
struct WorkerSandbox: Codable, Sendable, Equatable {
    /// Absolute paths, each hidden in the worker's own mount namespace: a directory under an empty read-only file
    /// system, a file under an empty one (/dev/null).
    var hiddenPaths: [String]
    /// Whether the worker lives in a network namespace of its own whose only interface is its loopback, on which castd
    /// (not the worker) listens: every connection the worker makes for a URL goes through castd's proxy, whatever
    /// opened it (a demuxer's nested input too), and nothing else can connect anywhere (docs/security.md, "SSRF").
    var privateNetwork: Bool
    /// Whether the worker may use the display: castd's window sessions' workers (their window). The others (every
    /// worker of a castd without a window, thumbnail workers) are started without `DISPLAY`, `XAUTHORITY` and
    /// `WAYLAND_DISPLAY`, see no X11 socket (`/tmp/.X11-unix` hidden; the abstract one belongs to the network
    /// namespace) and get a System V IPC namespace of their own, so that none can read the screen (the idle screen's
    /// PIN) or attach a window's shared-memory picture (SDL's MIT-SHM segments are mode 0777).
    var display: Bool

    static let maximumPaths = 8
    static let maximumPathLength = 4096

    /// Whether castd could have sent it: at most `maximumPaths` absolute paths without NUL, none too long.
    var isValid: Bool {
        hiddenPaths.count <= Self.maximumPaths
            && hiddenPaths.allSatisfy {
                $0.hasPrefix("/") && $0.utf8.count <= Self.maximumPathLength && !$0.utf8.contains(0)
            }
    }

    /// The sandbox that hides `paths` (made absolute against the current directory), with a private network and, when
    /// `display` is false, no display.
    init(hiding paths: [String], display: Bool = true) {
        hiddenPaths = paths.map { $0.hasPrefix("/") ? $0 : FileManager.default.currentDirectoryPath + "/" + $0 }
        privateNetwork = true
        self.display = display
    }

    init(hiddenPaths: [String], privateNetwork: Bool = true, display: Bool = true) {
        self.hiddenPaths = hiddenPaths
        self.privateNetwork = privateNetwork
        self.display = display
    }

    /// The same sandbox with `display` set so: without it, the X11 sockets' directory and the X authority file that
    /// castd's environment names are hidden too.
    func with(display: Bool) -> WorkerSandbox {
        var sandbox = self
        sandbox.display = display
        if !display {
            var paths = ["/tmp/.X11-unix"]
            if let authority = ProcessInfo.processInfo.environment["XAUTHORITY"], authority.hasPrefix("/") {
                paths.append(authority)
            }
            sandbox.hiddenPaths += paths.filter { !sandbox.hiddenPaths.contains($0) }
        }
        return sandbox
    }

    /// The environment variables that name a display, left out of a worker's environment when it has none.
    static let displayVariables = ["DISPLAY", "XAUTHORITY", "WAYLAND_DISPLAY"]
}

/// What a worker's sandbox came to (the `confined` message): nil problems mean all of it is in force.
struct SandboxReport: Codable, Sendable, Equatable {
    /// Why the hidden paths are still visible to the worker (no private mount namespace), or nil.
    var mountProblem: String?
    /// Why no system call filter is installed, or nil.
    var filterProblem: String?
    /// Why the worker shares castd's network (no private network namespace, or its loopback could not be brought
    /// up), or nil.
    var networkProblem: String?
    /// Why a worker without the display still shares castd's System V IPC namespace or sees the X11 sockets, or nil.
    var displayProblem: String?
    /// The port of the listener the worker handed castd (before this message, `WorkerSandbox.handOver`), on the
    /// worker's loopback: castd's proxy for the worker's URL answers there. Nil when there is none.
    var proxyPort: UInt16?

    /// Whether the texts fit the channel's bound for text.
    var isValid: Bool {
        (mountProblem?.utf8.count ?? 0) <= WorkerMessage.maximumMessageLength
            && (filterProblem?.utf8.count ?? 0) <= WorkerMessage.maximumMessageLength
            && (networkProblem?.utf8.count ?? 0) <= WorkerMessage.maximumMessageLength
            && (displayProblem?.utf8.count ?? 0) <= WorkerMessage.maximumMessageLength
            && proxyPort != 0
    }
}

extension WorkerSandbox {
    /// The worker's side, after `WorkerProcess.confine` and before anything of a session is read: makes its own
    /// mount and network namespaces (hiding the paths, bringing its loopback up), opens the listener castd's proxy
    /// will answer on in that network, gives up every capability, becomes undumpable and installs the system call
    /// filter, in that order (the filter forbids mount and unshare, so it comes last). Each step that the system
    /// does not allow is skipped and said in the report; the worker carries on without it. The listener is for
    /// `handOver`.
    func enter() -> (report: SandboxReport, listener: Int32?) {
        var report = SandboxReport()
        (report.mountProblem, report.networkProblem, report.displayProblem) = isolate()
        var port: UInt16 = 0
        let listener = cast_sandbox_loopback_listener(&port)
        if listener >= 0 {
            report.proxyPort = port
        } else {
            report.networkProblem = report.networkProblem ?? "no listener on the loopback: \(Self.describe(errno))"
        }
        Self.dropCapabilities()
        // Other processes of castd's user (another session's worker) cannot read this one's memory through /proc.
        _ = cast_sandbox_prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        report.filterProblem = Self.installFilter()
        return (report, listener >= 0 ? listener : nil)
    }

    /// The marker byte the listener travels with.
    private static let listenerMarker: UInt8 = 0x4C

    /// The worker's side: sends `listener` (or word that there is none) to castd over the channel, as one byte with
    /// the descriptor attached, before the `confined` message; then closes its own copy (castd's keeps the socket).
    static func handOver(_ listener: Int32?, over channel: Int32) {
        _ = cast_sandbox_send_descriptor(channel, listener ?? -1, listenerMarker)
        if let listener { _ = Glibc.close(listener) }
    }

    /// castd's side of `handOver`, before it reads the `confined` message: the listener, nil when the worker sent
    /// none. Throws when the channel ended, timed out (its receive timeout) or carried anything else.
    static func receiveListener(over channel: Int32) throws -> Int32? {
        var fd: Int32 = -1
        var marker: UInt8 = 0
        let received = cast_sandbox_receive_descriptor(channel, &fd, &marker)
        guard received == 1, marker == listenerMarker else {
            if fd >= 0 { _ = Glibc.close(fd) }
            throw WorkerFailure(received < 0 ? "no listener: \(describe(errno))" : "no listener: the channel ended")
        }
        return fd >= 0 ? fd : nil
    }

    /// castd's side: makes castd undumpable, so that a worker running as castd's user cannot open /proc/CASTD/root
    /// (castd's view of the file system, around the worker's mount namespace) or /proc/CASTD/mem, nor ptrace it.
    /// Also turns off castd's core files, which would hold its keys.
    static func protectCastd() {
        _ = cast_sandbox_prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    }

    /// A mount namespace (when there are paths to hide), a network namespace (when `privateNetwork`) and, for a
    /// worker without the display, an IPC namespace, all the worker's own; the problem with each, nil when it is in
    /// force. All in one unshare; should the system refuse that (a unit whose RestrictNamespaces= predates private
    /// networks), the mount namespace alone.
    private func isolate() -> (mount: String?, network: String?, display: String?) {
        let mount = hiddenPaths.isEmpty ? 0 : CLONE_NEWNS
        let network = privateNetwork ? CLONE_NEWNET : 0
        let ipc = display ? 0 : CLONE_NEWIPC
        guard mount | network | ipc != 0 else { return (nil, nil, nil) }
        if let problem = Self.unshare(mount | network | ipc) {
            let networkProblem = privateNetwork ? problem : nil
            let displayProblem = display ? nil : problem
            guard mount != 0 else { return (nil, networkProblem, displayProblem) }
            if network | ipc != 0, Self.unshare(mount) == nil { return (hide(), networkProblem, displayProblem) }
            return (problem, networkProblem, displayProblem)
        }
        var networkProblem: String?
        if network != 0, cast_sandbox_loopback_up() != 0 {
            networkProblem = "the private network's loopback cannot be brought up: \(Self.describe(errno))"
        }
        return (mount != 0 ? hide() : nil, networkProblem, nil)
    }

    /// unshare(2) of `flags`: as root (or with CAP_SYS_ADMIN) the namespaces are the worker's own; otherwise they go
    /// with a user namespace that maps only castd's user and group onto themselves, so files keep their owners and
    /// permissions. The problem, or nil.
    private static func unshare(_ flags: Int32) -> String? {
        let user = getuid()
        let group = getgid()
        if cast_sandbox_unshare(flags) == 0 { return nil }
        let first = errno
        guard first == EPERM else { return "unshare(\(names(flags))): \(describe(first))" }
        guard cast_sandbox_unshare(CLONE_NEWUSER | flags) == 0 else {
            return "unshare(CLONE_NEWUSER | \(names(flags))): \(describe(errno))"
        }
        // setgroups must be denied before an unprivileged process may write its gid_map.
        for (file, text) in [
            ("/proc/self/setgroups", "deny"), ("/proc/self/uid_map", "\(user) \(user) 1"),
            ("/proc/self/gid_map", "\(group) \(group) 1"),
        ] {
            if let problem = write(text, to: file) { return problem }
        }
        return nil
    }

    private static func names(_ flags: Int32) -> String {
        [(CLONE_NEWNS, "CLONE_NEWNS"), (CLONE_NEWNET, "CLONE_NEWNET"), (CLONE_NEWIPC, "CLONE_NEWIPC")]
            .filter { flags & $0.0 != 0 }.map(\.1).joined(separator: " | ")
    }

    /// Hides each path, in the worker's own mount namespace, under an empty read-only tmpfs (a directory) or
    /// /dev/null (a file).
    private func hide() -> String? {
        // Nothing mounted here may propagate back to castd's namespace, or from it into this one.
        guard cast_sandbox_mount(nil, "/", nil, UInt(MS_REC | MS_PRIVATE), nil) == 0 else {
            return "mount(/, MS_REC | MS_PRIVATE): \(Self.describe(errno))"
        }
        let flags = UInt(MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
        for path in hiddenPaths {
            var status = stat()
            // A path that does not exist holds nothing to hide.
            guard stat(path, &status) == 0 else { continue }
            if status.st_mode & S_IFMT == S_IFDIR {
                guard cast_sandbox_mount("castd-hidden", path, "tmpfs", flags, "size=4k,nr_inodes=2,mode=0") == 0 else {
                    return "mount(tmpfs on \(path)): \(Self.describe(errno))"
                }
            } else {
                // A file: /dev/null over it, read-only (a bind mount takes its flags from a remount).
                guard cast_sandbox_mount("/dev/null", path, nil, UInt(MS_BIND), nil) == 0,
                    cast_sandbox_mount(nil, path, nil, UInt(MS_REMOUNT | MS_BIND) | flags, nil) == 0
                else { return "mount(/dev/null on \(path)): \(Self.describe(errno))" }
            }
        }
        // A working directory inside a hidden path would still reach what is under it.
        _ = chdir("/")
        return nil
    }

    /// Empties the bounding, ambient, effective, permitted and inheritable sets. Matters when castd runs as root:
    /// with CAP_SYS_PTRACE or CAP_DAC_READ_SEARCH a worker could read castd's files through /proc/PID/root or file
    /// handles, around its mount namespace. Without capabilities a root worker still owns root's files.
    private static func dropCapabilities() {
        var capability: UInt = 0
        while capability < 64 {
            if cast_sandbox_prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0 && errno == EINVAL { break }
            capability += 1
        }
        _ = cast_sandbox_prctl(PR_CAP_AMBIENT, UInt(PR_CAP_AMBIENT_CLEAR_ALL), 0, 0, 0)
        _ = cast_sandbox_clear_capabilities()
    }

    /// Installs `SystemCallFilter.worker` on every thread of the worker. The worker has one thread at this point
    /// (nothing of a session has run), and every thread created later inherits the filter; should a library have
    /// started a thread already, all are synchronised (TSYNC).
    private static func installFilter() -> String? {
        guard let filter = SystemCallFilter.worker(pid: getpid()) else { return "no filter for this architecture" }
        var instructions = filter.program().map {
            sock_filter(code: $0.code, jt: $0.jumpIfTrue, jf: $0.jumpIfFalse, k: $0.operand)
        }
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task"))?.count ?? 2
        let result = instructions.withUnsafeMutableBufferPointer {
            cast_sandbox_install_filter($0.baseAddress, UInt16($0.count), threads == 1 ? 0 : 1)
        }
        if result == 0 { return nil }
        if result > 0 { return "seccomp: thread \(result) could not be synchronised" }
        return "seccomp(SECCOMP_SET_MODE_FILTER): \(describe(errno))"
    }

    private static func write(_ text: String, to file: String) -> String? {
        let fd = open(file, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return "open(\(file)): \(describe(errno))" }
        defer { _ = close(fd) }
        let bytes = Array(text.utf8)
        guard Glibc.write(fd, bytes, bytes.count) == bytes.count else { return "write(\(file)): \(describe(errno))" }
        return nil
    }

    private static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }
}
