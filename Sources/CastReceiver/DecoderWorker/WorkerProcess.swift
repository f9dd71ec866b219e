internal import CSandbox
import CastBase
import CastProtocol
import CastSecurity
import CastSystem
import Foundation
import Glibc

/// Starting a decoder worker (castd's side) and confining one (the worker's side): the system calls, kept apart
/// from the channel's logic.
enum WorkerProcess {
    /// The hidden mode's flag. Not in `castd --help`; the worker refuses to run unless castd started it (see
    /// `confine(parent:)`).
    static let flag = "--session-worker"
    /// The channel's descriptor in the worker.
    static let channelDescriptor: Int32 = 3

    /// Spawns a worker (`spawnNow`) on one thread that lives as long as castd. PR_SET_PDEATHSIG fires when the
    /// *thread* that created the child ends, not the process: a worker spawned from a connection's thread would be
    /// killed when that connection closed.
    static func spawn(channel: Int32, display: Bool) throws -> pid_t {
        try Spawner.shared.run { try spawnNow(channel: channel, display: display) }
    }

    /// Re-executes castd (`/proc/self/exe`: the running binary, even if it was replaced on disk) as a worker whose
    /// descriptor 3 is `channel`; its standard input is /dev/null and its standard output goes to castd's standard
    /// error (castd's standard output may carry `--events -`). Returns the worker's pid. Without `display`, its
    /// environment names none (`WorkerSandbox.displayVariables`).
    private static func spawnNow(channel: Int32, display: Bool) throws -> pid_t {
        let environment =
            display
            ? nil
            : ProcessInfo.processInfo.environment
                .filter { !WorkerSandbox.displayVariables.contains($0.key) }.map { "\($0.key)=\($0.value)" }
        do {
            return try ProcessSpawn.spawn(
                "/proc/self/exe", arguments: ["castd", flag, String(getpid())],
                descriptors: [.duplicate(channel, to: channelDescriptor), .nullInput(0), .duplicate(2, to: 1)],
                environment: environment)
        } catch {
            throw WorkerFailure("cannot start the decoder process: \(error)")
        }
    }

    /// How a worker ended, once it has: waits up to `grace` for it to exit by itself (poll on a pidfd, so the wait
    /// ends the moment it exits), then kills it (SIGKILL) and reaps it. The text says what happened, for the sender:
    /// "exited with status 3", "was killed by signal 9 (SIGKILL)". Without pidfds (a kernel before 5.3) the grace is
    /// not waited for.
    static func reap(_ pid: pid_t, grace: Duration) -> (signal: Int32?, text: String) {
        var status: Int32 = 0
        if grace > .zero {
            let exited = cast_sandbox_pidfd_open(pid)
            if exited >= 0 {
                defer { close(exited) }
                let deadline = ContinuousClock.now + grace
                var descriptor = pollfd(fd: exited, events: Int16(POLLIN), revents: 0)
                while ContinuousClock.now < deadline {
                    let left = deadline - ContinuousClock.now
                    let milliseconds =
                        left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
                    let ready = poll(&descriptor, 1, Int32(clamping: max(1, milliseconds)))
                    if ready > 0 || (ready < 0 && errno != EINTR) { break }
                }
            }
        }
        var result = waitpid(pid, &status, WNOHANG)
        while result < 0 && errno == EINTR { result = waitpid(pid, &status, WNOHANG) }
        if result < 0 { return (nil, "could not be waited for") }
        if result != pid {
            kill(pid, SIGKILL)
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        // WIFSIGNALED / WTERMSIG / WEXITSTATUS are macros.
        let signal = status & 0x7f
        if signal != 0 && signal != 0x7f { return (signal, "was killed by signal \(signal) (\(signalName(signal)))") }
        return (nil, "exited with status \((status >> 8) & 0xff)")
    }

    static func signalName(_ signal: Int32) -> String {
        switch signal {
        case SIGKILL: "SIGKILL"
        case SIGSEGV: "SIGSEGV"
        case SIGABRT: "SIGABRT"
        case SIGBUS: "SIGBUS"
        case SIGILL: "SIGILL"
        case SIGFPE: "SIGFPE"
        case SIGTERM: "SIGTERM"
        case SIGXCPU: "SIGXCPU"
        case SIGSYS: "SIGSYS"
        case SIGTRAP: "SIGTRAP"
        default: "signal \(signal)"
        }
    }

    /// A thread that never ends, running one job at a time for other threads.
    ///
    /// Thread-safety: the jobs wait in a `Monitor`; each caller waits on a `Monitor` of its own for its result.
    private final class Spawner: Sendable {
        static let shared = Spawner()
        private let jobs = Monitor([@Sendable () -> Void]())

        private init() {
            startDetachedThread(name: "castd.decoder.spawner", stackSize: 256 << 10) { [unowned self] in
                while true {
                    let job = jobs.withLock(when: { !$0.isEmpty }) { $0.removeFirst() }
                    job()
                }
            }
        }

        /// Runs `body` on the spawner's thread and returns what it returned (or throws what it threw).
        func run(_ body: @escaping @Sendable () throws -> pid_t) throws -> pid_t {
            let result = Monitor<Result<pid_t, any Error>?>(nil)
            jobs.withLock { $0.append { result.withLock { $0 = Result { try body() } } } }
            return try result.withLock(when: { $0 != nil }) { $0! }.get()
        }
    }

    // MARK: The worker's side

    /// First thing a worker does, before it reads anything: dies with castd, gains no privileges, dumps no core,
    /// and keeps no descriptor but 0, 1, 2 and the channel. Throws when it was not started by castd as a worker
    /// (`parent` is not its parent, or descriptor 3 is not a Unix socket whose peer is the parent).
    static func confine(parent: pid_t) throws {
        // PR_SET_PDEATHSIG, then check the parent: had castd died before the call, the signal would never come.
        try prctl(1, UInt(SIGKILL), "PR_SET_PDEATHSIG")
        guard getppid() == parent else { throw WorkerFailure("not started by castd (the parent is \(getppid()))") }
        // struct ucred (pid, uid, gid), which Glibc hides behind _GNU_SOURCE.
        var credentials: [Int32] = [0, 0, 0]
        var length = socklen_t(3 * MemoryLayout<Int32>.size)
        guard getsockopt(channelDescriptor, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0,
            credentials[0] == parent
        else { throw WorkerFailure("descriptor \(channelDescriptor) is not castd's channel") }
        try prctl(38, 1, "PR_SET_NO_NEW_PRIVS")
        try setLimit(Int32(RLIMIT_CORE.rawValue), 0, "RLIMIT_CORE")
        // Whatever castd had open without close-on-exec stays out of reach.
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for name in open {
            if let fd = Int32(name), fd > channelDescriptor { _ = Glibc.close(fd) }
        }
    }

    /// The limits castd asked for, applied before the media is opened.
    static func apply(_ limits: DecoderLimits) throws {
        try setLimit(Int32(RLIMIT_AS.rawValue), UInt64(max(limits.addressSpace, 512 << 20)), "RLIMIT_AS")
        try setLimit(Int32(RLIMIT_NOFILE.rawValue), UInt64(max(limits.openFiles, 16)), "RLIMIT_NOFILE")
    }

    private static func setLimit(_ resource: Int32, _ value: UInt64, _ name: String) throws {
        var limit = rlimit(rlim_cur: rlim_t(value), rlim_max: rlim_t(value))
        guard setrlimit(__rlimit_resource_t(UInt32(resource)), &limit) == 0 else {
            throw WorkerFailure("setrlimit(\(name)): \(String(cString: strerror(errno)))")
        }
    }

    /// prctl(2) with one argument. It is variadic in glibc, which Swift does not import: looked up and called with
    /// its fixed arguments (as the System V ABI passes them), the way castd calls mallopt.
    private static func prctl(_ option: Int32, _ argument: UInt, _ name: String) throws {
        typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "prctl") else {
            throw WorkerFailure("prctl is not available")
        }
        let function = unsafeBitCast(symbol, to: Prctl.self)
        guard function(option, argument, 0, 0, 0) == 0 else {
            throw WorkerFailure("prctl(\(name)): \(String(cString: strerror(errno)))")
        }
    }
}
