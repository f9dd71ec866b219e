import Foundation
import XCTest

@testable import CastReceiver

/// The decoder worker's seccomp program (docs/decoder-worker.md, "The sandbox"): run through a classic BPF
/// interpreter written here from the kernel's ABI, and installed by the kernel in a separate process, it refuses what
/// a decoder never does, kills a foreign architecture, and lets through what FFmpeg, ALSA, URLs and SDL/X11 need.
final class SystemCallFilterTests: XCTestCase {
    private enum Fixtures {
        // The kernel's ABI, written out independently of the shim (linux/audit.h, linux/seccomp.h).
        static let x86_64: UInt32 = 0xC000_003E
        static let aarch64: UInt32 = 0xC000_00B7
        static let i386: UInt32 = 0x4000_0003
        static let allow: UInt32 = 0x7fff_0000
        static let killProcess: UInt32 = 0x8000_0000
        static let eperm: UInt32 = 0x0005_0000 | 1

        /// System calls a worker makes whatever the arguments, by number on the machine's architecture: read, openat,
        /// mmap, ioctl, connect, shmget, shmat, futex, getpid, getrandom.
        static var allowed: [UInt32] {
            #if arch(x86_64)
                return [0, 257, 9, 16, 42, 29, 30, 202, 39, 318]
            #else
                return [63, 56, 222, 29, 203, 194, 196, 98, 172, 278]
            #endif
        }
        /// execve, mount, unshare, setns fail with EPERM (no rule names them); ptrace, process_vm_readv, bpf and
        /// io_uring_setup are killed.
        static var refused: [(UInt32, UInt32)] {
            #if arch(x86_64)
                return [
                    (59, eperm), (165, eperm), (272, eperm), (308, eperm), (101, killProcess), (310, killProcess),
                    (321, killProcess), (425, killProcess),
                ]
            #else
                return [
                    (221, eperm), (40, eperm), (97, eperm), (268, eperm), (117, killProcess), (270, killProcess),
                    (280, killProcess), (425, killProcess),
                ]
            #endif
        }
        /// Calls no rule names, by name, for the kernel's test.
        static var unnamed: [String: UInt32] {
            #if arch(x86_64)
                return ["execve": 59, "mount": 165, "unshare": 272, "setns": 308, "fork": 57, "vfork": 58]
            #else
                return ["execve": 221, "mount": 40, "unshare": 97, "setns": 268]
            #endif
        }
        static let enosys: UInt32 = 0x0005_0000 | 38
        // linux/sched.h
        /// glibc's pthread_create: VM, FS, FILES, SIGHAND, THREAD, SYSVSEM, SETTLS, PARENT_SETTID, CHILD_CLEARTID.
        static let threadFlags: UInt64 = 0x003d_0f00
        static let newUser: UInt64 = 0x1000_0000
        static let newNet: UInt64 = 0x4000_0000
        static let newNS: UInt64 = 0x0002_0000
        static let sigchld: UInt64 = 17
        /// A worker's pid, and castd's.
        static let worker: Int32 = 4242
        static let castd: Int32 = 4200
        static var native: UInt32 {
            #if arch(x86_64)
                return x86_64
            #else
                return aarch64
            #endif
        }
    }

    /// Runs `program` on struct seccomp_data {nr, arch, ...} as the kernel would: only what a seccomp filter may
    /// contain (absolute 32-bit loads, forward jumps on constants, returns), checked as the kernel's verifier does.
    private func run(
        _ program: [SystemCallFilter.Instruction], number: UInt32, architecture: UInt32, firstArgument: UInt64 = 0,
        arguments: [UInt64] = [], file: StaticString = #filePath, line: UInt = #line
    ) -> UInt32? {
        let arguments = arguments.isEmpty ? [firstArgument] : arguments
        var accumulator: UInt32 = 0
        var pc = 0
        var steps = 0
        while pc < program.count, steps <= program.count {
            steps += 1
            let instruction = program[pc]
            let operand = instruction.operand
            switch instruction.code {
            case 0x20:  // BPF_LD | BPF_W | BPF_ABS
                switch operand {
                case 0: accumulator = number
                case 4: accumulator = architecture
                case 16..<64 where operand % 4 == 0:
                    // args[n]: the low word at 16 + 8n, the high word 4 bytes later (little-endian).
                    let index = Int(operand - 16) / 8
                    let value = index < arguments.count ? arguments[index] : 0
                    accumulator = UInt32(truncatingIfNeeded: operand % 8 == 0 ? value : value >> 32)
                default:
                    XCTFail("load of offset \(operand)", file: file, line: line)
                    return nil
                }
                pc += 1
            case 0x15, 0x35, 0x45:  // BPF_JMP | BPF_JEQ, BPF_JGE, BPF_JSET | BPF_K
                let taken =
                    switch instruction.code {
                    case 0x15: accumulator == operand
                    case 0x35: accumulator >= operand
                    default: accumulator & operand != 0
                    }
                pc += 1 + Int(taken ? instruction.jumpIfTrue : instruction.jumpIfFalse)
                if pc >= program.count {
                    XCTFail("a jump past the end", file: file, line: line)
                    return nil
                }
            case 0x06:  // BPF_RET | BPF_K
                return operand
            default:
                XCTFail("instruction code \(instruction.code)", file: file, line: line)
                return nil
            }
        }
        XCTFail("ran off the end of the program", file: file, line: line)
        return nil
    }

    func testTheWorkersFilterAllowsWhatADecoderNeedsAndRefusesTheRest() throws {
        let filter = try XCTUnwrap(SystemCallFilter.worker(pid: Fixtures.worker))
        XCTAssertEqual(filter.architecture, Fixtures.native)
        let program = filter.program()
        XCTAssertLessThanOrEqual(program.count, 4096)
        // An allow list: the last word is EPERM, not allow.
        XCTAssertEqual(
            program.last,
            SystemCallFilter.Instruction(code: 0x06, jumpIfTrue: 0, jumpIfFalse: 0, operand: Fixtures.eperm))
        for number in Fixtures.allowed {
            XCTAssertEqual(run(program, number: number, architecture: Fixtures.native), Fixtures.allow, "\(number)")
        }
        for (number, action) in Fixtures.refused {
            XCTAssertEqual(run(program, number: number, architecture: Fixtures.native), action, "\(number)")
        }
        // A number no kernel has yet: refused.
        XCTAssertEqual(run(program, number: 1000, architecture: Fixtures.native), Fixtures.eperm)
        // Every rule's number gets its rule's action when it has no checks, and no number is listed twice.
        for rule in filter.rules where rule.checks.isEmpty {
            XCTAssertEqual(
                run(program, number: rule.number, architecture: Fixtures.native, firstArgument: 99_999),
                rule.action.returnValue, rule.name)
        }
        XCTAssertEqual(Set(filter.rules.map(\.number)).count, filter.rules.count)
        // Another architecture's numbers mean other calls: all are killed, even the allowed ones.
        for architecture in [Fixtures.i386, Fixtures.native == Fixtures.x86_64 ? Fixtures.aarch64 : Fixtures.x86_64] {
            XCTAssertEqual(run(program, number: Fixtures.allowed[0], architecture: architecture), Fixtures.killProcess)
        }
    }

    /// Runs the worker's program on the rule named `name` with these arguments.
    private func call(_ name: String, _ arguments: Int64...) throws -> UInt32? {
        let filter = try XCTUnwrap(SystemCallFilter.worker(pid: Fixtures.worker))
        let rule = try XCTUnwrap(filter.rules.first { $0.name == name }, name)
        return run(
            filter.program(), number: rule.number, architecture: Fixtures.native,
            arguments: arguments.map { UInt64(bitPattern: $0) })
    }

    /// A worker signals, schedules and limits itself only: castd (same user) is out of its reach, also through its
    /// process group (`kill(0, …)`) and every process (`kill(-1, …)`).
    func testSignalsPrioritiesAndLimitsReachOnlyTheWorkerItself() throws {
        let me = Int64(Fixtures.worker)
        let castd = Int64(Fixtures.castd)
        for name in ["kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"] {
            XCTAssertEqual(try call(name, me), Fixtures.allow, name)
            for other in [castd, 0, -1, -castd, 1 << 32 | me] {
                XCTAssertEqual(try call(name, other), Fixtures.eperm, "\(name)(\(other))")
            }
        }
        // prlimit64(pid, resource, …): its own limits (RLIMIT_NOFILE, 7), never RLIMIT_CPU (0): castd moves that one
        // as playback moves on, and the worker must not lift it.
        let nofile: Int64 = 7
        XCTAssertEqual(try call("prlimit64", 0, nofile), Fixtures.allow)
        XCTAssertEqual(try call("prlimit64", me, nofile), Fixtures.allow)
        XCTAssertEqual(try call("prlimit64", castd, nofile), Fixtures.eperm)
        XCTAssertEqual(try call("prlimit64", 0, 0), Fixtures.eperm, "RLIMIT_CPU")
        XCTAssertEqual(try call("prlimit64", me, 0), Fixtures.eperm, "RLIMIT_CPU")
        for name in ["sched_setaffinity", "sched_setscheduler", "sched_setparam", "sched_setattr"] {
            XCTAssertEqual(try call(name, 0), Fixtures.allow, name)
            XCTAssertEqual(try call(name, me), Fixtures.allow, name)
            XCTAssertEqual(try call(name, castd), Fixtures.eperm, name)
            XCTAssertEqual(try call(name, -1), Fixtures.eperm, name)
        }
        // setpriority(which, who, nice): PRIO_PROCESS of the worker only; PRIO_PGRP and PRIO_USER reach castd.
        XCTAssertEqual(try call("setpriority", 0, 0, 19), Fixtures.allow)
        XCTAssertEqual(try call("setpriority", 0, me, 19), Fixtures.allow)
        XCTAssertEqual(try call("setpriority", 0, castd, 19), Fixtures.eperm)
        XCTAssertEqual(try call("setpriority", 1, 0, 19), Fixtures.eperm)
        XCTAssertEqual(try call("setpriority", 2, 0, 19), Fixtures.eperm)
        XCTAssertNil(SystemCallFilter.worker(pid: Fixtures.worker)?.rules.first { $0.name == "tkill" })
        XCTAssertNil(SystemCallFilter.worker(pid: Fixtures.worker)?.rules.first { $0.name == "pidfd_send_signal" })
    }

    /// clone makes threads only: a process (fork) or a namespace is refused, and clone3, whose flags BPF cannot read,
    /// says ENOSYS so that glibc falls back to clone.
    func testCloneMakesThreadsButNoProcessesOrNamespaces() throws {
        XCTAssertEqual(try call("clone", Int64(Fixtures.threadFlags)), Fixtures.allow)
        XCTAssertEqual(try call("clone", Int64(Fixtures.sigchld)), Fixtures.eperm)  // fork
        XCTAssertEqual(try call("clone", Int64(0x4111)), Fixtures.eperm)  // vfork: CLONE_VM | CLONE_VFORK | SIGCHLD
        for namespace in [Fixtures.newUser, Fixtures.newNet, Fixtures.newNS, 0x0400_0000, 0x0800_0000, 0x2000_0000] {
            XCTAssertEqual(try call("clone", Int64(Fixtures.threadFlags | namespace)), Fixtures.eperm, "\(namespace)")
            XCTAssertEqual(try call("clone", Int64(Fixtures.sigchld | namespace)), Fixtures.eperm, "\(namespace)")
        }
        // The kernel reads the low 32 bits of clone's flags.
        XCTAssertEqual(try call("clone", Int64(1 << 32 | Fixtures.sigchld)), Fixtures.eperm)
        XCTAssertEqual(try call("clone3", 0, 88), Fixtures.enosys)
    }

    /// fcntl and ioctl run with every command but those that make the kernel signal a process of the caller's choosing
    /// (castd) or type into a terminal; prctl runs only with the options a library uses; socket only for Unix, IP and
    /// netlink sockets.
    func testCommandsThatReachOtherProcessesAreRefused() throws {
        XCTAssertEqual(try call("fcntl", 3, 3), Fixtures.allow)  // F_GETFL
        XCTAssertEqual(try call("fcntl", 3, 2, 1), Fixtures.allow)  // F_SETFD
        XCTAssertEqual(try call("fcntl", 3, 1030), Fixtures.allow)  // F_DUPFD_CLOEXEC
        for command in [8, 10, 15] {  // F_SETOWN, F_SETSIG, F_SETOWN_EX
            XCTAssertEqual(try call("fcntl", 3, Int64(command), Int64(Fixtures.castd)), Fixtures.eperm, "\(command)")
            XCTAssertEqual(try call("fcntl", 3, 1 << 32 | Int64(command)), Fixtures.eperm, "\(command)")
        }
        XCTAssertEqual(try call("ioctl", 3, 0x541B), Fixtures.allow)  // FIONREAD
        XCTAssertEqual(try call("ioctl", 3, 0xC004_4111), Fixtures.allow)  // SNDRV_PCM_IOCTL_HW_PARAMS-like
        for request in [0x8901, 0x8902, 0x5410, 0x5412, 0x541C] {  // FIOSETOWN SIOCSPGRP TIOCSPGRP TIOCSTI TIOCLINUX
            XCTAssertEqual(try call("ioctl", 3, Int64(request)), Fixtures.eperm, "\(request)")
        }
        XCTAssertEqual(try call("prctl", 15), Fixtures.allow)  // PR_SET_NAME
        XCTAssertEqual(try call("prctl", 16), Fixtures.allow)  // PR_GET_NAME
        for option in [4, 59, 36, 35, 22, 1] {  // DUMPABLE PTRACER CHILD_SUBREAPER SET_MM SET_SECCOMP PDEATHSIG
            XCTAssertEqual(try call("prctl", Int64(option), 1), Fixtures.eperm, "\(option)")
        }
        XCTAssertEqual(try call("prctl", 1 << 32 | 15), Fixtures.eperm)
        for domain in [1, 2, 10, 16] {  // AF_UNIX AF_INET AF_INET6 AF_NETLINK
            XCTAssertEqual(try call("socket", Int64(domain), 1), Fixtures.allow, "\(domain)")
        }
        for domain in [17, 5, 38, 40] {  // AF_PACKET AF_APPLETALK AF_ALG AF_VSOCK
            XCTAssertEqual(try call("socket", Int64(domain), 3), Fixtures.eperm, "\(domain)")
        }
    }

    func testX32CallsAreKilledOnX86_64() {
        let program = SystemCallFilter(architecture: Fixtures.x86_64, rules: [], otherwise: .allow).program()
        XCTAssertEqual(run(program, number: 0x4000_0000, architecture: Fixtures.x86_64), Fixtures.killProcess)
        XCTAssertEqual(run(program, number: 0x4000_0000 | 59, architecture: Fixtures.x86_64), Fixtures.killProcess)
        XCTAssertEqual(run(program, number: 59, architecture: Fixtures.x86_64), Fixtures.allow)
        // aarch64 has no such bit: no such check.
        let arm = SystemCallFilter(architecture: Fixtures.aarch64, rules: [], otherwise: .allow).program()
        XCTAssertEqual(arm.count, program.count - 2)
    }

    func testTheActionsAreTheKernelsReturnValues() {
        XCTAssertEqual(SystemCallFilter.x86_64, Fixtures.x86_64)
        XCTAssertEqual(SystemCallFilter.aarch64, Fixtures.aarch64)
        XCTAssertEqual(SystemCallFilter.Action.allow.returnValue, Fixtures.allow)
        XCTAssertEqual(SystemCallFilter.Action.killProcess.returnValue, Fixtures.killProcess)
        XCTAssertEqual(SystemCallFilter.Action.fail(errno: 1).returnValue, Fixtures.eperm)
    }

    /// The kernel runs the program: a separate process (python3, which the tests' media server needs anyway) installs
    /// the worker's program made for its own pid, then tries every call the filter exists to refuse, each one with
    /// arguments whose result without the filter is known to differ (a pid that does not exist gives ESRCH, not
    /// EPERM; unshare(0) succeeds), and the calls a worker needs, a thread started by glibc included; last, in a
    /// process of its own each, the calls that kill, which must kill it with SIGSYS.
    func testTheKernelEnforcesTheProgram() throws {
        let main = try runFiltered(last: nil)
        let results = main.results
        let text = main.output
        func assertRefused(_ name: String, _ errno: String = "1", line: UInt = #line) {
            XCTAssertEqual(results[name]?.errno, errno, "\(name): \(text)", line: line)
        }
        func assertWorked(_ name: String, line: UInt = #line) {
            XCTAssertEqual(results[name]?.errno, "0", "\(name): \(text)", line: line)
        }
        // Other processes: signals, priorities, scheduling (the test's pid, a pid that does not exist, process groups).
        for name in [
            "kill-parent", "kill-group", "kill-everyone", "tgkill-parent", "setpriority-other", "setpriority-group",
            "setaffinity-other", "setscheduler-other", "prlimit-other",
        ] { assertRefused(name) }
        // Descriptors that would signal castd, a terminal typed into.
        for name in [
            "fcntl-setown", "fcntl-setsig", "fcntl-setown-ex", "ioctl-fiosetown", "ioctl-siocspgrp", "ioctl-tiocsti",
        ] { assertRefused(name) }
        // Processes and namespaces.
        for name in ["unshare-user", "unshare-nothing", "clone-fork", "clone-user-net", "clone-thread-net", "setns"] {
            assertRefused(name)
        }
        #if arch(x86_64)
            assertRefused("fork")
            assertRefused("vfork")
        #endif
        assertRefused("clone3", "38")  // ENOSYS: glibc falls back to clone
        for name in ["prctl-dumpable", "prctl-subreaper", "socket-packet", "execve", "mount"] { assertRefused(name) }
        // What a worker needs still works.
        for name in [
            "kill-self", "tgkill-self", "setpriority-self", "setaffinity-self", "prlimit-self", "fcntl-getfl",
            "ioctl-fionread", "prctl-name", "socket-unix", "socket-inet", "getrandom", "thread", "getpid",
        ] { assertWorked(name) }
        XCTAssertTrue(text.contains("survived"), text)
        XCTAssertEqual(main.process.terminationReason, .exit, text)

        var killers = ["ptrace", "bpf", "io_uring_setup", "process_vm_readv"]
        #if arch(x86_64)
            killers.append("modify_ldt")
        #endif
        for killer in killers {
            let run = try runFiltered(last: killer)
            XCTAssertEqual(run.results["getpid"]?.errno, "0", "\(killer): \(run.output)")
            XCTAssertFalse(run.output.contains("survived"), "\(killer): \(run.output)")
            XCTAssertEqual(run.process.terminationReason, .uncaughtSignal, "\(killer): \(run.output)")
            XCTAssertEqual(run.process.terminationStatus, SIGSYS, "\(killer): \(run.output)")
        }
    }

    /// What a filtered python3 printed: each call's result and errno by its label, and how it ended.
    private struct FilteredRun {
        var process: Process
        var output: String
        var results: [String: (result: String, errno: String)]
    }

    /// Starts python3, which says its pid and waits for its program; installs the worker's filter for that pid and
    /// makes the calls of `script` (or, with `last`, only getpid and then that call, which should kill it).
    private func runFiltered(last: String?) throws -> FilteredRun {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("seccomp-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", Self.script, last ?? "-"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let firstLine = output.fileHandleForReading.readLine()
        let pid = try XCTUnwrap(firstLine.flatMap { Int32($0.split(separator: " ").last ?? "") }, "\(firstLine ?? "")")
        let filter = try XCTUnwrap(SystemCallFilter.worker(pid: pid))
        var bytes: [UInt8] = []
        for instruction in filter.program() {
            withUnsafeBytes(of: instruction.code.littleEndian) { bytes += $0 }
            bytes += [instruction.jumpIfTrue, instruction.jumpIfFalse]
            withUnsafeBytes(of: instruction.operand.littleEndian) { bytes += $0 }
        }
        let programFile = folder.appendingPathComponent("filter-\(pid).bpf")
        try Data(bytes).write(to: programFile)
        var numbers = Fixtures.unnamed
        for rule in filter.rules { numbers[rule.name] = rule.number }
        let line = programFile.path + " " + numbers.map { "\($0.key)=\($0.value)" }.joined(separator: ",") + "\n"
        input.fileHandleForWriting.write(Data(line.utf8))
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let results = Dictionary(
            text.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }.filter { $0.count == 3 }
                .map { ($0[0], (result: $0[1], errno: $0[2])) }, uniquingKeysWith: { a, _ in a })
        return FilteredRun(process: process, output: text, results: results)
    }

    /// The calls, by the names of `SystemCallFilter`'s rules (and `Fixtures.unnamed`). A pid that does not exist
    /// (`ghost`) shows the filter at work where the call would otherwise reach another process: ESRCH without it.
    private static let script = """
        import ctypes, os, socket, sys, threading
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        os.setpgrp()  # setpriority(PRIO_PGRP, 0) reaches this process only, were it let through
        print('pid', os.getpid(), flush=True)
        path, names = sys.stdin.readline().split()
        n = {name: int(number) for name, number in (pair.split('=') for pair in names.split(','))}
        code = open(path, 'rb').read()
        class Program(ctypes.Structure):
            _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.c_void_p)]
        buffer = ctypes.create_string_buffer(code, len(code))
        program = Program(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p))
        me, parent, ghost = os.getpid(), os.getppid(), 0x3ffffff0
        unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        r, w = os.pipe()
        mask = ctypes.create_string_buffer(128)
        assert libc.syscall(ctypes.c_long(n['sched_getaffinity']), 0, 128, mask) > 0
        owner = ctypes.c_int(parent)
        char = ctypes.c_char(b'x')
        param = ctypes.c_int(0)
        assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
        assert libc.prctl(22, 2, ctypes.byref(program), 0, 0) == 0, ctypes.get_errno()  # PR_SET_SECCOMP, FILTER
        def call(label, name, *args):
            ctypes.set_errno(0)
            arguments = [a if isinstance(a, ctypes.c_void_p) else ctypes.c_long(a) for a in args]
            result = libc.syscall(ctypes.c_long(n[name]), *arguments)
            if result == 0 and label in ('fork', 'vfork', 'clone-fork', 'clone-user-net'):
                os._exit(0)  # a child the filter let through
            print(label, result, ctypes.get_errno() if result < 0 else 0, flush=True)
        def pointer(value):
            return ctypes.c_void_p(ctypes.addressof(value))
        call('getpid', 'getpid')
        if sys.argv[1] != '-':
            call(sys.argv[1], sys.argv[1], 0, 0, 0, 0)
            print('survived', flush=True)
            sys.exit(0)
        call('kill-self', 'kill', me, 0)
        call('kill-parent', 'kill', parent, 0)
        call('kill-group', 'kill', 0, 0)
        call('kill-everyone', 'kill', -1, 0)
        call('tgkill-self', 'tgkill', me, me, 0)
        call('tgkill-parent', 'tgkill', parent, parent, 0)
        call('setpriority-self', 'setpriority', 0, 0, 19)
        call('setpriority-other', 'setpriority', 0, ghost, 19)
        call('setpriority-group', 'setpriority', 1, 0, 19)
        call('setaffinity-self', 'sched_setaffinity', 0, 128, pointer(mask))
        call('setaffinity-other', 'sched_setaffinity', ghost, 128, pointer(mask))
        call('setscheduler-other', 'sched_setscheduler', ghost, 0, pointer(param))
        call('prlimit-self', 'prlimit64', 0, 7, 0, 0)
        call('prlimit-other', 'prlimit64', ghost, 7, 0, 0)
        call('fcntl-getfl', 'fcntl', r, 3)
        call('fcntl-setown', 'fcntl', r, 8, parent)
        call('fcntl-setsig', 'fcntl', r, 10, 10)
        call('fcntl-setown-ex', 'fcntl', r, 15, 0)
        call('ioctl-fionread', 'ioctl', r, 0x541B, pointer(param))
        call('ioctl-fiosetown', 'ioctl', unix.fileno(), 0x8901, pointer(owner))
        call('ioctl-siocspgrp', 'ioctl', unix.fileno(), 0x8902, pointer(owner))
        call('ioctl-tiocsti', 'ioctl', 0, 0x5412, pointer(char))
        call('unshare-nothing', 'unshare', 0)
        call('unshare-user', 'unshare', 0x10000000)
        call('clone-fork', 'clone', 17, 0, 0, 0, 0)
        call('clone-user-net', 'clone', 0x50000000 | 17, 0, 0, 0, 0)
        call('clone-thread-net', 'clone', 0x40000000 | 0x10000 | 0x800 | 0x100, 0, 0, 0, 0)
        call('clone3', 'clone3', 0, 0)
        if 'fork' in n:
            call('fork', 'fork')
            call('vfork', 'vfork')
        call('setns', 'setns', 0, 0)
        call('execve', 'execve', 0, 0, 0)
        call('mount', 'mount', 0, 0, 0, 0, 0)
        call('prctl-name', 'prctl', 15, pointer(ctypes.create_string_buffer(b'filtered')))
        call('prctl-dumpable', 'prctl', 4, 1, 0, 0, 0)
        call('prctl-subreaper', 'prctl', 36, 1, 0, 0, 0)
        call('socket-unix', 'socket', 1, 1, 0)
        call('socket-inet', 'socket', 2, 2, 0)
        call('socket-packet', 'socket', 17, 3, 0)
        call('getrandom', 'getrandom', pointer(mask), 16, 0)
        seen = []
        try:
            thread = threading.Thread(target=lambda: seen.append(threading.get_native_id()))
            thread.start()
            thread.join()
        except RuntimeError as error:
            print('thread', -1, error.errno if hasattr(error, 'errno') else 1, flush=True)
        if seen:
            print('thread', seen[0], 0, flush=True)
        print('survived', flush=True)
        """
}

extension FileHandle {
    /// One line (without its newline), read a byte at a time so that nothing after it is consumed; nil at the end.
    fileprivate func readLine() -> String? {
        var bytes: [UInt8] = []
        while let byte = try? read(upToCount: 1), let first = byte.first {
            if first == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(first)
        }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }
}
