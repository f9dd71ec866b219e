internal import CSandbox

/// The decoder worker's seccomp-bpf program, as values: which system calls a worker may make (an allow list, some with
/// checks of their arguments), which ones kill it, and the classic BPF instructions that say so to the kernel. Pure:
/// building the program does no I/O (`WorkerSandbox` installs it), so tests run it through an interpreter.
///
/// The list is what FFmpeg (demuxing, decoding on its threads, http(s) and TLS), ALSA (hw, dmix, file and null
/// PCMs), SDL2 on X11 (window sessions, MIT-SHM), glibc, the Swift runtime and the worker's own code were seen to call
/// in traced runs of every output mode (docs/decoder-worker.md, "The sandbox", says which calls and why). Anything
/// else fails with EPERM: a library that tries something new gets an error it can handle, not a dead session, and a
/// compromised decoder gets nothing. The calls whose only use in a worker is an attack on the kernel or on another
/// process kill the worker instead.
struct SystemCallFilter: Sendable, Equatable {
    /// What the kernel does with a system call.
    enum Action: Sendable, Equatable {
        /// Runs it.
        case allow
        /// Fails it with this errno, without running it.
        case fail(errno: UInt16)
        /// Kills the whole process with SIGSYS before it runs (castd reports `killed by signal 31 (SIGSYS)`).
        case killProcess

        /// The filter's return value (SECCOMP_RET_*).
        var returnValue: UInt32 {
            switch self {
            case .allow: UInt32(SECCOMP_RET_ALLOW)
            case .fail(let code): UInt32(SECCOMP_RET_ERRNO) | (UInt32(code) & UInt32(SECCOMP_RET_DATA))
            case .killProcess: UInt32(SECCOMP_RET_KILL_PROCESS)
            }
        }
    }

    /// One classic BPF instruction, laid out as `struct sock_filter`.
    struct Instruction: Sendable, Equatable {
        var code: UInt16
        var jumpIfTrue: UInt8
        var jumpIfFalse: UInt8
        var operand: UInt32
    }

    /// A condition on one argument of a call (0 is the first). BPF sees each 64-bit argument as two 32-bit words.
    enum ArgumentCheck: Sendable, Equatable {
        /// The whole 64-bit argument is one of these values: a pid that must be 0 or the worker's own.
        case isOneOf(argument: Int, values: [UInt32])
        /// The argument's low 32 bits are none of these: a command the kernel reads as an `unsigned int` (fcntl's,
        /// ioctl's), whatever the high bits say.
        case isNoneOf(argument: Int, values: [UInt32])
        /// The argument's low 32 bits have every bit of `required` and none of `forbidden` (clone's flags, which the
        /// kernel takes from the low 32 bits).
        case hasBits(argument: Int, required: UInt32, forbidden: UInt32)
    }

    /// What the filter does with one system call, by number for one architecture.
    struct Rule: Sendable, Equatable {
        var name: String
        var number: UInt32
        var action: Action
        /// With `action` `.allow`: the call runs only if every check holds, and gets `refusal` otherwise.
        var checks: [ArgumentCheck] = []
        var refusal: Action = SystemCallFilter.refused
    }

    /// The audit architecture the program accepts (AUDIT_ARCH_*); every other one is killed.
    var architecture: UInt32
    /// The calls the filter names, each with its action.
    var rules: [Rule]
    /// What happens to every call no rule names.
    var otherwise: Action

    /// AUDIT_ARCH_X86_64.
    static var x86_64: UInt32 { cast_sandbox_audit_arch_x86_64() }
    /// AUDIT_ARCH_AARCH64.
    static var aarch64: UInt32 { cast_sandbox_audit_arch_aarch64() }
    /// On x86_64, x32 system calls share the architecture and set this bit in the number: all are killed.
    static let x32Bit: UInt32 = 0x4000_0000
    /// offsetof(struct seccomp_data, args[0]): after nr, arch and the 64-bit instruction pointer.
    static var firstArgument: UInt32 { cast_sandbox_offset_of_nr() + 16 }

    /// The program, in order: a foreign architecture (a 32-bit entry into a 64-bit kernel, or x32) is killed, then
    /// each rule is matched on the number (and its arguments checked), then `otherwise`.
    func program() -> [Instruction] {
        let load = UInt16(BPF_LD | BPF_W | BPF_ABS)
        let equal = UInt16(BPF_JMP | BPF_JEQ | BPF_K)
        let atLeast = UInt16(BPF_JMP | BPF_JGE | BPF_K)
        let ret = UInt16(BPF_RET | BPF_K)
        let kill = Action.killProcess.returnValue
        var program: [Instruction] = [
            Instruction(code: load, jumpIfTrue: 0, jumpIfFalse: 0, operand: cast_sandbox_offset_of_arch()),
            Instruction(code: equal, jumpIfTrue: 1, jumpIfFalse: 0, operand: architecture),
            Instruction(code: ret, jumpIfTrue: 0, jumpIfFalse: 0, operand: kill),
            Instruction(code: load, jumpIfTrue: 0, jumpIfFalse: 0, operand: cast_sandbox_offset_of_nr()),
        ]
        if architecture == Self.x86_64 {
            program.append(Instruction(code: atLeast, jumpIfTrue: 0, jumpIfFalse: 1, operand: Self.x32Bit))
            program.append(Instruction(code: ret, jumpIfTrue: 0, jumpIfFalse: 0, operand: kill))
        }
        for rule in rules {
            guard rule.action == .allow, !rule.checks.isEmpty else {
                program.append(Instruction(code: equal, jumpIfTrue: 0, jumpIfFalse: 1, operand: rule.number))
                program.append(Instruction(code: ret, jumpIfTrue: 0, jumpIfFalse: 0, operand: rule.action.returnValue))
                continue
            }
            // Not this call: past the block. This call: every check, then allow; a failed check jumps to the refusal.
            // Every path through the block returns, so the next rule finds the number still in the accumulator.
            let block = Self.checkBlock(rule)
            program.append(
                Instruction(code: equal, jumpIfTrue: 0, jumpIfFalse: UInt8(block.count), operand: rule.number))
            program += block
        }
        program.append(Instruction(code: ret, jumpIfTrue: 0, jumpIfFalse: 0, operand: otherwise.returnValue))
        return program
    }

    /// Where a check's jump goes: on to the next instruction, over `skip` instructions, or to the rule's refusal.
    private enum Target {
        case next
        case skip(Int)
        case refusal
    }

    /// A rule's checks as instructions, ending with its two returns (allow, then the refusal). Arguments are
    /// little-endian on both architectures: the low word of args[n] is at 16 + 8n, the high word 4 bytes later.
    private static func checkBlock(_ rule: Rule) -> [Instruction] {
        let load = UInt16(BPF_LD | BPF_W | BPF_ABS)
        let equal = UInt16(BPF_JMP | BPF_JEQ | BPF_K)
        let anyBit = UInt16(BPF_JMP | BPF_JSET | BPF_K)
        var steps: [(code: UInt16, operand: UInt32, ifTrue: Target, ifFalse: Target)] = []
        func low(_ argument: Int) -> UInt32 { firstArgument + 8 * UInt32(argument) }
        for check in rule.checks {
            switch check {
            case .isOneOf(let argument, let values):
                steps.append((load, low(argument) + 4, .next, .next))
                steps.append((equal, 0, .next, .refusal))
                steps.append((load, low(argument), .next, .next))
                // A match skips the values left to compare; a miss on the last one is the refusal.
                for (index, value) in values.enumerated() {
                    let left = values.count - 1 - index
                    steps.append((equal, value, left == 0 ? .next : .skip(left), left == 0 ? .refusal : .next))
                }
            case .isNoneOf(let argument, let values):
                steps.append((load, low(argument), .next, .next))
                for value in values { steps.append((equal, value, .refusal, .next)) }
            case .hasBits(let argument, let required, let forbidden):
                steps.append((load, low(argument), .next, .next))
                if required != 0 { steps.append((anyBit, required, .next, .refusal)) }
                if forbidden != 0 { steps.append((anyBit, forbidden, .refusal, .next)) }
            }
        }
        let ret = UInt16(BPF_RET | BPF_K)
        let refusalIndex = steps.count + 1
        var block = steps.enumerated().map { index, step -> Instruction in
            func offset(_ target: Target) -> UInt8 {
                switch target {
                case .next: 0
                case .skip(let count): UInt8(count)
                case .refusal: UInt8(refusalIndex - index - 1)
                }
            }
            return Instruction(
                code: step.code, jumpIfTrue: offset(step.ifTrue), jumpIfFalse: offset(step.ifFalse),
                operand: step.operand)
        }
        block.append(Instruction(code: ret, jumpIfTrue: 0, jumpIfFalse: 0, operand: Action.allow.returnValue))
        block.append(Instruction(code: ret, jumpIfTrue: 0, jumpIfFalse: 0, operand: rule.refusal.returnValue))
        return block
    }

    /// The filter of the worker whose pid is `pid`, for the architecture castd was built for; nil where there is
    /// none (not x86_64 or aarch64: the worker then runs without a filter and castd says so).
    static func worker(pid: Int32) -> SystemCallFilter? {
        #if arch(x86_64)
            return SystemCallFilter(architecture: x86_64, rules: workerRules(pid: pid), otherwise: refused)
        #elseif arch(arm64)
            return SystemCallFilter(architecture: aarch64, rules: workerRules(pid: pid), otherwise: refused)
        #else
            return nil
        #endif
    }

    /// What a call outside the list gets.
    static let refused = Action.fail(errno: UInt16(EPERM))

    /// fcntl commands that make the kernel signal a process of the caller's choosing when a descriptor is ready
    /// (F_SETOWN, F_SETSIG, F_SETOWN_EX: the same on x86_64 and aarch64).
    static let signallingFcntlCommands: [UInt32] = [8, 10, 15]
    /// ioctl requests that do the same for a socket or a terminal (FIOSETOWN, SIOCSPGRP, TIOCSPGRP), or type into the
    /// terminal castd's standard error may be (TIOCSTI, TIOCLINUX).
    static let signallingIoctlRequests: [UInt32] = [0x8901, 0x8902, 0x5410, 0x5412, 0x541C]
    /// clone flags that make a namespace: a worker may start threads, never a process, and never a namespace.
    static var namespaceFlags: UInt32 {
        UInt32(
            CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)
    }
    /// prctl options a worker may use: naming its threads (FFmpeg, SDL, Foundation), naming anonymous memory (glibc's
    /// malloc), and reading its own state. Everything else (PR_SET_DUMPABLE back to 1, PR_SET_PTRACER,
    /// PR_SET_CHILD_SUBREAPER, PR_SET_MM, …) is refused.
    static let allowedPrctlOptions: [UInt32] = [
        15,  // PR_SET_NAME
        16,  // PR_GET_NAME
        3,  // PR_GET_DUMPABLE
        0x5356_4d41,  // PR_SET_VMA
    ]
    /// Socket domains: Unix (the X server), IPv4 and IPv6 (URLs), netlink (getaddrinfo's look at the addresses).
    static let allowedSocketDomains: [UInt32] = [1, 2, 10, 16]

    /// The worker's list, hot calls first (the kernel runs the program on every call). `pid` is the worker's own:
    /// signals, priorities and limits may reach the worker itself only, never castd (which runs as the same user),
    /// another worker, or a process group.
    static func workerRules(pid: Int32) -> [Rule] {
        let me = UInt32(bitPattern: pid)
        func allow(_ name: String, _ number: Int32, _ checks: [ArgumentCheck] = []) -> Rule {
            Rule(name: name, number: UInt32(number), action: .allow, checks: checks)
        }
        func kill(_ name: String, _ number: Int32) -> Rule {
            Rule(name: name, number: UInt32(number), action: .killProcess)
        }
        let itself: [UInt32] = [0, me]
        var rules: [Rule] = [
            // Threads and waiting: FFmpeg's frame and slice threads, the engine's pipeline, ALSA's and SDL's polls.
            allow("futex", __NR_futex),
            allow("read", __NR_read),
            allow("write", __NR_write),
            allow("ppoll", __NR_ppoll),
            allow("clock_nanosleep", __NR_clock_nanosleep),
            allow("nanosleep", __NR_nanosleep),
            allow("clock_gettime", __NR_clock_gettime),
            allow("sched_yield", __NR_sched_yield),
            // Memory.
            allow("mmap", __NR_mmap),
            allow("munmap", __NR_munmap),
            allow("mprotect", __NR_mprotect),
            allow("madvise", __NR_madvise),
            allow("mremap", __NR_mremap),
            allow("brk", __NR_brk),
            allow("membarrier", __NR_membarrier),
            // Files and descriptors: media, ALSA's configuration and devices, the framemd5 file and the timing log,
            // CA certificates, resolv.conf, fonts and X11's files for SDL.
            allow("readv", __NR_readv),
            allow("writev", __NR_writev),
            allow("pread64", __NR_pread64),
            allow("pwrite64", __NR_pwrite64),
            allow("lseek", __NR_lseek),
            allow("openat", __NR_openat),
            allow("close", __NR_close),
            allow("fstat", __NR_fstat),
            allow("newfstatat", __NR_newfstatat),
            allow("statx", __NR_statx),
            allow("fstatfs", __NR_fstatfs),
            allow("statfs", __NR_statfs),
            allow("faccessat", __NR_faccessat),
            allow("faccessat2", __NR_faccessat2),
            allow("readlinkat", __NR_readlinkat),
            allow("getdents64", __NR_getdents64),
            allow("getcwd", __NR_getcwd),
            allow("dup", __NR_dup),
            allow("dup3", __NR_dup3),
            allow("pipe2", __NR_pipe2),
            allow("eventfd2", __NR_eventfd2),
            allow("ftruncate", __NR_ftruncate),
            allow("fsync", __NR_fsync),
            allow("fdatasync", __NR_fdatasync),
            allow("flock", __NR_flock),
            allow("fcntl", __NR_fcntl, [.isNoneOf(argument: 1, values: signallingFcntlCommands)]),
            allow("ioctl", __NR_ioctl, [.isNoneOf(argument: 1, values: signallingIoctlRequests)]),
            allow("epoll_create1", __NR_epoll_create1),
            allow("epoll_ctl", __NR_epoll_ctl),
            allow("epoll_pwait", __NR_epoll_pwait),
            allow("pselect6", __NR_pselect6),
            allow("timerfd_create", __NR_timerfd_create),
            allow("timerfd_settime", __NR_timerfd_settime),
            allow("timerfd_gettime", __NR_timerfd_gettime),
            allow("memfd_create", __NR_memfd_create),
            // Sockets: URLs (FFmpeg's http, tcp, tls; DNS), the X server's Unix socket.
            allow("socket", __NR_socket, [.isOneOf(argument: 0, values: allowedSocketDomains)]),
            allow("connect", __NR_connect),
            allow("sendto", __NR_sendto),
            allow("recvfrom", __NR_recvfrom),
            allow("sendmsg", __NR_sendmsg),
            allow("recvmsg", __NR_recvmsg),
            allow("sendmmsg", __NR_sendmmsg),
            allow("shutdown", __NR_shutdown),
            allow("bind", __NR_bind),
            allow("getsockname", __NR_getsockname),
            allow("getpeername", __NR_getpeername),
            allow("getsockopt", __NR_getsockopt),
            allow("setsockopt", __NR_setsockopt),
            // System V shared memory and semaphores: X11's MIT-SHM (SDL), ALSA's dmix and dsnoop.
            allow("shmget", __NR_shmget),
            allow("shmat", __NR_shmat),
            allow("shmdt", __NR_shmdt),
            allow("shmctl", __NR_shmctl),
            allow("semget", __NR_semget),
            allow("semop", __NR_semop),
            allow("semtimedop", __NR_semtimedop),
            allow("semctl", __NR_semctl),
            // Threads: started only as threads of the worker (no process, no namespace); clone3 says ENOSYS, which
            // makes glibc fall back to clone, whose flags BPF can see (clone3's are behind a pointer).
            allow(
                "clone", __NR_clone,
                [.hasBits(argument: 0, required: UInt32(CLONE_THREAD), forbidden: namespaceFlags)]),
            Rule(name: "clone3", number: UInt32(__NR_clone3), action: .fail(errno: UInt16(ENOSYS))),
            allow("set_robust_list", __NR_set_robust_list),
            allow("rseq", __NR_rseq),
            allow("set_tid_address", __NR_set_tid_address),
            allow("gettid", __NR_gettid),
            allow("exit", __NR_exit),
            allow("exit_group", __NR_exit_group),
            // Signals: handlers and masks (the Swift runtime, glibc), and signals to the worker itself only (glibc's
            // raise and pthread_kill use tgkill with the own pid; the kernel then checks that the thread is its).
            allow("rt_sigaction", __NR_rt_sigaction),
            allow("rt_sigprocmask", __NR_rt_sigprocmask),
            allow("rt_sigreturn", __NR_rt_sigreturn),
            allow("sigaltstack", __NR_sigaltstack),
            allow("kill", __NR_kill, [.isOneOf(argument: 0, values: [me])]),
            allow("tgkill", __NR_tgkill, [.isOneOf(argument: 0, values: [me])]),
            allow("rt_sigqueueinfo", __NR_rt_sigqueueinfo, [.isOneOf(argument: 0, values: [me])]),
            allow("rt_tgsigqueueinfo", __NR_rt_tgsigqueueinfo, [.isOneOf(argument: 0, values: [me])]),
            // Scheduling and limits of the worker itself (0 or its pid; another thread's id cannot be told from
            // castd's, so it is refused): FFmpeg's CPU count, SDL's thread priorities, glibc's setrlimit.
            allow("sched_getaffinity", __NR_sched_getaffinity),
            allow("sched_setaffinity", __NR_sched_setaffinity, [.isOneOf(argument: 0, values: itself)]),
            allow("sched_getparam", __NR_sched_getparam),
            allow("sched_setparam", __NR_sched_setparam, [.isOneOf(argument: 0, values: itself)]),
            allow("sched_getscheduler", __NR_sched_getscheduler),
            allow("sched_setscheduler", __NR_sched_setscheduler, [.isOneOf(argument: 0, values: itself)]),
            allow("sched_setattr", __NR_sched_setattr, [.isOneOf(argument: 0, values: itself)]),
            allow("sched_get_priority_max", __NR_sched_get_priority_max),
            allow("sched_get_priority_min", __NR_sched_get_priority_min),
            allow("getpriority", __NR_getpriority),
            allow(
                "setpriority", __NR_setpriority,
                [.isOneOf(argument: 0, values: [0 /* PRIO_PROCESS */]), .isOneOf(argument: 1, values: itself)]),
            // Not RLIMIT_CPU (0): castd moves the soft limit as playback moves on, and the worker must not lift it.
            allow(
                "prlimit64", __NR_prlimit64,
                [.isOneOf(argument: 0, values: itself), .isNoneOf(argument: 1, values: [0])]),
            allow("getrusage", __NR_getrusage),
            allow("prctl", __NR_prctl, [.isOneOf(argument: 0, values: allowedPrctlOptions)]),
            // Who and where: ids, the machine's name and memory, randomness (hash seeds, TLS).
            allow("getpid", __NR_getpid),
            allow("getppid", __NR_getppid),
            allow("getuid", __NR_getuid),
            allow("geteuid", __NR_geteuid),
            allow("getgid", __NR_getgid),
            allow("getegid", __NR_getegid),
            allow("getresuid", __NR_getresuid),
            allow("getresgid", __NR_getresgid),
            allow("getgroups", __NR_getgroups),
            allow("uname", __NR_uname),
            allow("sysinfo", __NR_sysinfo),
            allow("getrandom", __NR_getrandom),
            allow("clock_getres", __NR_clock_getres),
            allow("gettimeofday", __NR_gettimeofday),
            // Killed: an attack on another process (reading or writing its memory or descriptors) or on the kernel's
            // most attacked interfaces, which no decoder has a use for.
            kill("ptrace", __NR_ptrace),
            kill("process_vm_readv", __NR_process_vm_readv),
            kill("process_vm_writev", __NR_process_vm_writev),
            kill("pidfd_getfd", __NR_pidfd_getfd),
            kill("kcmp", __NR_kcmp),
            kill("bpf", __NR_bpf),
            kill("perf_event_open", __NR_perf_event_open),
            kill("userfaultfd", __NR_userfaultfd),
            kill("io_uring_setup", __NR_io_uring_setup),
            kill("io_uring_enter", __NR_io_uring_enter),
            kill("io_uring_register", __NR_io_uring_register),
            kill("keyctl", __NR_keyctl),
            kill("add_key", __NR_add_key),
            kill("request_key", __NR_request_key),
            kill("init_module", __NR_init_module),
            kill("finit_module", __NR_finit_module),
            kill("delete_module", __NR_delete_module),
            kill("kexec_load", __NR_kexec_load),
            kill("kexec_file_load", __NR_kexec_file_load),
            // Opens any inode of a mounted file system, around the mount namespace.
            kill("open_by_handle_at", __NR_open_by_handle_at),
        ]
        #if arch(x86_64)
            // The older calls that aarch64 never had, which glibc and older libraries still make on x86_64.
            rules += [
                allow("poll", __NR_poll),
                allow("select", __NR_select),
                allow("open", __NR_open),
                allow("stat", __NR_stat),
                allow("lstat", __NR_lstat),
                allow("access", __NR_access),
                allow("readlink", __NR_readlink),
                allow("pipe", __NR_pipe),
                allow("dup2", __NR_dup2),
                allow("getdents", __NR_getdents),
                allow("epoll_create", __NR_epoll_create),
                allow("epoll_wait", __NR_epoll_wait),
                allow("eventfd", __NR_eventfd),
                allow("time", __NR_time),
                allow("getrlimit", __NR_getrlimit),
                allow("arch_prctl", __NR_arch_prctl),
                kill("modify_ldt", __NR_modify_ldt),
                kill("iopl", __NR_iopl),
                kill("ioperm", __NR_ioperm),
            ]
        #endif
        return rules
    }
}
