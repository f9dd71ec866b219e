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

        /// System calls the worker (or a later window worker) makes, by number on the machine's architecture:
        /// read, openat, mmap, ioctl, clone, socket, connect, shmget, shmat, futex, getpid.
        static var allowed: [UInt32] {
            #if arch(x86_64)
                return [0, 257, 9, 16, 56, 41, 42, 29, 30, 202, 39]
            #else
                return [63, 56, 222, 29, 220, 198, 203, 194, 196, 98, 172]
            #endif
        }
        /// execve, mount, unshare, setns with EPERM; ptrace, process_vm_readv, bpf killed.
        static var refused: [(UInt32, UInt32)] {
            #if arch(x86_64)
                return [
                    (59, eperm), (165, eperm), (272, eperm), (308, eperm), (101, killProcess), (310, killProcess),
                    (321, killProcess),
                ]
            #else
                return [
                    (221, eperm), (40, eperm), (97, eperm), (268, eperm), (117, killProcess), (270, killProcess),
                    (280, killProcess),
                ]
            #endif
        }
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
        file: StaticString = #filePath, line: UInt = #line
    ) -> UInt32? {
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
                case 16: accumulator = UInt32(truncatingIfNeeded: firstArgument)
                case 20: accumulator = UInt32(truncatingIfNeeded: firstArgument >> 32)
                default:
                    XCTFail("load of offset \(operand)", file: file, line: line)
                    return nil
                }
                pc += 1
            case 0x15, 0x35:  // BPF_JMP | BPF_JEQ | BPF_K, BPF_JMP | BPF_JGE | BPF_K
                let taken = instruction.code == 0x15 ? accumulator == operand : accumulator >= operand
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

    func testTheWorkersFilterRefusesWhatADecoderNeverDoesAndAllowsTheRest() throws {
        let filter = try XCTUnwrap(SystemCallFilter.worker(pid: Fixtures.worker))
        XCTAssertEqual(filter.architecture, Fixtures.native)
        let program = filter.program()
        XCTAssertLessThanOrEqual(program.count, 4096)
        XCTAssertEqual(
            program.last,
            SystemCallFilter.Instruction(code: 0x06, jumpIfTrue: 0, jumpIfFalse: 0, operand: Fixtures.allow))
        for number in Fixtures.allowed {
            XCTAssertEqual(run(program, number: number, architecture: Fixtures.native), Fixtures.allow, "\(number)")
        }
        for (number, action) in Fixtures.refused {
            XCTAssertEqual(run(program, number: number, architecture: Fixtures.native), action, "\(number)")
        }
        // Every rule's number gets its rule's action (unless its first argument is allowed), and no number is
        // listed twice.
        for rule in filter.rules {
            XCTAssertEqual(
                run(program, number: rule.number, architecture: Fixtures.native, firstArgument: 99_999),
                rule.action.returnValue, rule.name)
            for argument in rule.allowedFirstArguments {
                XCTAssertEqual(
                    run(program, number: rule.number, architecture: Fixtures.native, firstArgument: UInt64(argument)),
                    Fixtures.allow, "\(rule.name)(\(argument))")
                // Only the whole 64-bit value counts.
                XCTAssertEqual(
                    run(
                        program, number: rule.number, architecture: Fixtures.native,
                        firstArgument: 1 << 32 | UInt64(argument)), rule.action.returnValue, rule.name)
            }
        }
        XCTAssertEqual(Set(filter.rules.map(\.number)).count, filter.rules.count)
        // Another architecture's numbers mean other calls: all are killed, even the allowed ones.
        for architecture in [Fixtures.i386, Fixtures.native == Fixtures.x86_64 ? Fixtures.aarch64 : Fixtures.x86_64] {
            XCTAssertEqual(run(program, number: Fixtures.allowed[0], architecture: architecture), Fixtures.killProcess)
        }
    }

    /// A worker signals and limits itself only: castd (same user) is out of its reach, also through its process
    /// group (`kill(0, …)`) and every process (`kill(-1, …)`).
    func testSignalsAndLimitsReachOnlyTheWorkerItself() throws {
        let filter = try XCTUnwrap(SystemCallFilter.worker(pid: Fixtures.worker))
        let program = filter.program()
        func call(_ name: String, _ argument: Int64) throws -> UInt32? {
            let rule = try XCTUnwrap(filter.rules.first { $0.name == name }, name)
            return run(
                program, number: rule.number, architecture: Fixtures.native,
                firstArgument: UInt64(bitPattern: argument))
        }
        for name in ["kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"] {
            XCTAssertEqual(try call(name, Int64(Fixtures.worker)), Fixtures.allow, name)
            for other in [Int64(Fixtures.castd), 0, -1, -Int64(Fixtures.castd)] {
                XCTAssertEqual(try call(name, other), Fixtures.eperm, "\(name)(\(other))")
            }
        }
        XCTAssertEqual(try call("prlimit64", 0), Fixtures.allow)
        XCTAssertEqual(try call("prlimit64", Int64(Fixtures.worker)), Fixtures.allow)
        XCTAssertEqual(try call("prlimit64", Int64(Fixtures.castd)), Fixtures.eperm)
        XCTAssertEqual(try call("tkill", Int64(Fixtures.worker)), Fixtures.eperm)
        XCTAssertEqual(try call("pidfd_send_signal", 3), Fixtures.eperm)
        // The rules after an argument check still see the number.
        for (number, action) in Fixtures.refused {
            XCTAssertEqual(run(program, number: number, architecture: Fixtures.native, firstArgument: 7), action)
        }
    }

    func testX32CallsAreKilledOnX86_64() {
        let program = SystemCallFilter(architecture: Fixtures.x86_64, rules: []).program()
        XCTAssertEqual(run(program, number: 0x4000_0000, architecture: Fixtures.x86_64), Fixtures.killProcess)
        XCTAssertEqual(run(program, number: 0x4000_0000 | 59, architecture: Fixtures.x86_64), Fixtures.killProcess)
        XCTAssertEqual(run(program, number: 59, architecture: Fixtures.x86_64), Fixtures.allow)
        // aarch64 has no such bit: no such check.
        let arm = SystemCallFilter(architecture: Fixtures.aarch64, rules: []).program()
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
    /// exactly these instructions, then makes calls whose result without the filter is known (unshare(0) succeeds,
    /// execve(NULL) and mount(NULL) fail with EFAULT or EINVAL), and last a ptrace, which must kill it with SIGSYS.
    func testTheKernelEnforcesTheProgram() throws {
        let filter = try XCTUnwrap(SystemCallFilter.worker(pid: Fixtures.worker))
        var bytes: [UInt8] = []
        for instruction in filter.program() {
            withUnsafeBytes(of: instruction.code.littleEndian) { bytes += $0 }
            bytes += [instruction.jumpIfTrue, instruction.jumpIfFalse]
            withUnsafeBytes(of: instruction.operand.littleEndian) { bytes += $0 }
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("seccomp-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let programFile = folder.appendingPathComponent("filter.bpf")
        try Data(bytes).write(to: programFile)
        func number(_ name: String) throws -> UInt32 {
            try XCTUnwrap(filter.rules.first { $0.name == name }?.number, name)
        }
        #if arch(x86_64)
            let (getpidNumber, socketNumber) = (39, 41)
        #else
            let (getpidNumber, socketNumber) = (172, 198)
        #endif
        let script = """
            import ctypes, os, sys
            libc = ctypes.CDLL(None, use_errno=True)
            libc.syscall.restype = ctypes.c_long
            code = open(sys.argv[1], 'rb').read()
            class Program(ctypes.Structure):
                _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.c_void_p)]
            buffer = ctypes.create_string_buffer(code, len(code))
            program = Program(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p))
            assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
            assert libc.prctl(22, 2, ctypes.byref(program), 0, 0) == 0, ctypes.get_errno()  # PR_SET_SECCOMP, FILTER
            def call(name, number, *args):
                ctypes.set_errno(0)
                result = libc.syscall(ctypes.c_long(number), *[ctypes.c_long(a) for a in args])
                print(name, result, ctypes.get_errno() if result < 0 else 0, flush=True)
            for pair in sys.argv[2:-1]:
                name, number = pair.split('=')
                call(name, int(number), 0, 0, 0, 0, 0)
            call('socket', \(socketNumber), 1, 1, 0)
            call('killparent', \(try number("kill")), os.getppid(), 0)
            call('prlimit', \(try number("prlimit64")), 0, 7, 0, 0)
            name, number = sys.argv[-1].split('=')
            call(name, int(number), 0, 0, 0, 0)
            print('survived', flush=True)
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            "-c", script, programFile.path, "unshare=\(try number("unshare"))", "execve=\(try number("execve"))",
            "mount=\(try number("mount"))", "setns=\(try number("setns"))", "getpid=\(getpidNumber)",
            "ptrace=\(try number("ptrace"))",
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let results = Dictionary(
            text.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }.filter { $0.count == 3 }
                .map { ($0[0], ($0[1], $0[2])) }, uniquingKeysWith: { a, _ in a })
        XCTAssertEqual(results["unshare"]?.1, "1", text)  // EPERM, where unshare(0) succeeds unfiltered
        XCTAssertEqual(results["execve"]?.1, "1", text)  // EPERM, not EFAULT
        XCTAssertEqual(results["mount"]?.1, "1", text)
        XCTAssertEqual(results["setns"]?.1, "1", text)
        XCTAssertEqual(results["getpid"]?.1, "0", text)
        XCTAssertEqual(results["socket"]?.1, "0", text)  // SDL's X11 connection and URLs need sockets
        XCTAssertEqual(results["killparent"]?.1, "1", text)  // kill(the test, 0) succeeds unfiltered
        XCTAssertEqual(results["prlimit"]?.1, "0", text)
        XCTAssertFalse(text.contains("survived"), text)
        XCTAssertEqual(process.terminationReason, .uncaughtSignal, text)
        XCTAssertEqual(process.terminationStatus, SIGSYS, text)
    }
}
