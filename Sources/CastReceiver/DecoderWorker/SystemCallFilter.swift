internal import CSandbox

/// The decoder worker's seccomp-bpf program, as values: which system calls a worker may never make, and the classic
/// BPF instructions that say so to the kernel. Pure: building the program does no I/O (`WorkerSandbox` installs it),
/// so tests run it through an interpreter.
///
/// The filter is a deny list, not an allow list. FFmpeg, ALSA (and its plugins), glibc, the Swift runtime, FFmpeg's
/// http(s) protocols and, later, SDL2 on X11 in window sessions use a wide and version-dependent set of system
/// calls; an allow list tight enough to matter would break on the next library update. What is denied here is what
/// turns code execution in a decoder into more: running programs, reading or writing other processes, changing
/// what the file system shows (mounts, namespaces, chroot), reaching the kernel's attack surface (bpf, keyrings,
/// modules, perf, userfaultfd) and the machine's state (reboot, swap, clock, host name). Sockets, shared memory,
/// `ioctl`, `mmap` and threads stay allowed: URLs, ALSA and SDL/X11 need them.
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

    /// A system call the filter refuses, by number for one architecture.
    struct Rule: Sendable, Equatable {
        var name: String
        var number: UInt32
        var action: Action
        /// First arguments with which the call is allowed after all (a pid: the worker's own), compared as 64-bit
        /// values; empty: refused whatever the arguments.
        var allowedFirstArguments: [UInt32] = []
    }

    /// The audit architecture the program accepts (AUDIT_ARCH_*); every other one is killed.
    var architecture: UInt32
    /// The refused system calls; everything else is allowed.
    var rules: [Rule]

    /// AUDIT_ARCH_X86_64.
    static var x86_64: UInt32 { cast_sandbox_audit_arch_x86_64() }
    /// AUDIT_ARCH_AARCH64.
    static var aarch64: UInt32 { cast_sandbox_audit_arch_aarch64() }
    /// On x86_64, x32 system calls share the architecture and set this bit in the number: all are killed.
    static let x32Bit: UInt32 = 0x4000_0000
    /// offsetof(struct seccomp_data, args[0]): after nr, arch and the 64-bit instruction pointer.
    static var firstArgument: UInt32 { cast_sandbox_offset_of_nr() + 16 }

    /// The program, in order: a foreign architecture (a 32-bit entry into a 64-bit kernel, or x32) is killed, then
    /// each rule is matched on the number, then the call is allowed.
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
            let allowed = rule.allowedFirstArguments
            guard !allowed.isEmpty else {
                program.append(Instruction(code: equal, jumpIfTrue: 0, jumpIfFalse: 1, operand: rule.number))
                program.append(Instruction(code: ret, jumpIfTrue: 0, jumpIfFalse: 0, operand: rule.action.returnValue))
                continue
            }
            // Not this call: past the block. This call: args[0]'s high word must be 0 and its low word one of
            // `allowed` (allow), else the rule's action. args[0] is at 16 in struct seccomp_data, little-endian on
            // both architectures.
            let count = UInt8(allowed.count)
            program.append(Instruction(code: equal, jumpIfTrue: 0, jumpIfFalse: 5 + count, operand: rule.number))
            program.append(Instruction(code: load, jumpIfTrue: 0, jumpIfFalse: 0, operand: Self.firstArgument + 4))
            program.append(Instruction(code: equal, jumpIfTrue: 0, jumpIfFalse: count + 1, operand: 0))
            program.append(Instruction(code: load, jumpIfTrue: 0, jumpIfFalse: 0, operand: Self.firstArgument))
            for (index, value) in allowed.enumerated() {
                program.append(
                    Instruction(code: equal, jumpIfTrue: count - UInt8(index), jumpIfFalse: 0, operand: value))
            }
            program.append(Instruction(code: ret, jumpIfTrue: 0, jumpIfFalse: 0, operand: rule.action.returnValue))
            program.append(Instruction(code: ret, jumpIfTrue: 0, jumpIfFalse: 0, operand: Action.allow.returnValue))
            // Every path that loaded an argument returned: the next rule finds the number in the accumulator.
        }
        program.append(Instruction(code: ret, jumpIfTrue: 0, jumpIfFalse: 0, operand: Action.allow.returnValue))
        return program
    }

    /// The filter of the worker whose pid is `pid`, for the architecture castd was built for; nil where there is
    /// none (not x86_64 or aarch64: the worker then runs without a filter and castd says so).
    static func worker(pid: Int32) -> SystemCallFilter? {
        #if arch(x86_64)
            return SystemCallFilter(architecture: x86_64, rules: workerRules(pid: pid))
        #elseif arch(arm64)
            return SystemCallFilter(architecture: aarch64, rules: workerRules(pid: pid))
        #else
            return nil
        #endif
    }

    /// What a decoder never does. Killed: the calls whose only use in a worker is an attack on another process or on
    /// the kernel. Failed with EPERM: the rest, which a library might try harmlessly (libpulse's ALSA plugin
    /// `exec`s a sound server when none runs; a failed exec leaves it without one, a kill would end the session).
    /// Signals and resource limits go to the worker itself only (`pid`): castd runs as the same user, and a worker
    /// could otherwise kill it (`kill(CASTD, SIGKILL)`, `kill(-1, …)`, `kill(0, …)` for the process group) or
    /// starve it (`prlimit64(CASTD, RLIMIT_NOFILE, 0)`).
    static func workerRules(pid: Int32) -> [Rule] {
        let eperm = Action.fail(errno: UInt16(EPERM))
        func rule(_ name: String, _ number: Int32, _ action: Action, unless arguments: [UInt32] = []) -> Rule {
            Rule(name: name, number: UInt32(number), action: action, allowedFirstArguments: arguments)
        }
        let me = UInt32(bitPattern: pid)
        var rules: [Rule] = [
            // Other processes: signals (glibc's raise and pthread_kill use tgkill with the own pid) and limits
            // (glibc's setrlimit is prlimit64 with pid 0).
            rule("kill", __NR_kill, eperm, unless: [me]),
            rule("tgkill", __NR_tgkill, eperm, unless: [me]),
            rule("tkill", __NR_tkill, eperm),
            rule("rt_sigqueueinfo", __NR_rt_sigqueueinfo, eperm, unless: [me]),
            rule("rt_tgsigqueueinfo", __NR_rt_tgsigqueueinfo, eperm, unless: [me]),
            rule("pidfd_send_signal", __NR_pidfd_send_signal, eperm),
            rule("prlimit64", __NR_prlimit64, eperm, unless: [0, me]),
            // Other processes: reading or writing their memory or descriptors.
            rule("ptrace", __NR_ptrace, .killProcess),
            rule("process_vm_readv", __NR_process_vm_readv, .killProcess),
            rule("process_vm_writev", __NR_process_vm_writev, .killProcess),
            rule("pidfd_getfd", __NR_pidfd_getfd, .killProcess),
            rule("kcmp", __NR_kcmp, .killProcess),
            // The kernel's attack surface.
            rule("bpf", __NR_bpf, .killProcess),
            rule("perf_event_open", __NR_perf_event_open, .killProcess),
            rule("userfaultfd", __NR_userfaultfd, .killProcess),
            rule("keyctl", __NR_keyctl, .killProcess),
            rule("add_key", __NR_add_key, .killProcess),
            rule("request_key", __NR_request_key, .killProcess),
            rule("init_module", __NR_init_module, .killProcess),
            rule("finit_module", __NR_finit_module, .killProcess),
            rule("delete_module", __NR_delete_module, .killProcess),
            rule("kexec_load", __NR_kexec_load, .killProcess),
            rule("kexec_file_load", __NR_kexec_file_load, .killProcess),
            // Escaping the mount namespace (a file handle opens any inode of a mounted file system).
            rule("open_by_handle_at", __NR_open_by_handle_at, .killProcess),
            // Running programs.
            rule("execve", __NR_execve, eperm),
            rule("execveat", __NR_execveat, eperm),
            // What the file system shows: the worker's view is set before the filter and must stay so.
            rule("mount", __NR_mount, eperm),
            rule("umount2", __NR_umount2, eperm),
            rule("pivot_root", __NR_pivot_root, eperm),
            rule("chroot", __NR_chroot, eperm),
            rule("unshare", __NR_unshare, eperm),
            rule("setns", __NR_setns, eperm),
            rule("name_to_handle_at", __NR_name_to_handle_at, eperm),
            rule("open_tree", __NR_open_tree, eperm),
            rule("move_mount", __NR_move_mount, eperm),
            rule("fsopen", __NR_fsopen, eperm),
            rule("fsconfig", __NR_fsconfig, eperm),
            rule("fsmount", __NR_fsmount, eperm),
            rule("fspick", __NR_fspick, eperm),
            rule("mount_setattr", __NR_mount_setattr, eperm),
            // The machine's state.
            rule("reboot", __NR_reboot, eperm),
            rule("swapon", __NR_swapon, eperm),
            rule("swapoff", __NR_swapoff, eperm),
            rule("acct", __NR_acct, eperm),
            rule("quotactl", __NR_quotactl, eperm),
            rule("settimeofday", __NR_settimeofday, eperm),
            rule("clock_settime", __NR_clock_settime, eperm),
            rule("clock_adjtime", __NR_clock_adjtime, eperm),
            rule("adjtimex", __NR_adjtimex, eperm),
            rule("sethostname", __NR_sethostname, eperm),
            rule("setdomainname", __NR_setdomainname, eperm),
            rule("syslog", __NR_syslog, eperm),
            rule("vhangup", __NR_vhangup, eperm),
        ]
        #if arch(x86_64)
            rules += [
                rule("iopl", __NR_iopl, .killProcess),
                rule("ioperm", __NR_ioperm, .killProcess),
                rule("uselib", __NR_uselib, eperm),
            ]
        #endif
        return rules
    }
}
