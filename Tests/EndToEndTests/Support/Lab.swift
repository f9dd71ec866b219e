import Foundation
import XCTest

/// A network lab (namespaces `<name>-box` and `<name>-phone`, and with `rooms` more receiver hosts `<name>-room1`…,
/// each with its own D-Bus and avahi-daemon), made by `scripts/lab` for one test and torn down after it. mDNS never
/// leaves it.
final class Lab {
    enum Host: String {
        case box
        case phone
        /// Receiver hosts of a lab made with rooms (a group's members), each linked to the phone.
        case room1, room2, room3
    }

    let name: String
    private(set) var daemons: [Daemon] = []

    /// Brings the lab up, with `rooms` (0…3) receiver hosts beside the box; skips the test when it cannot exist here
    /// (not root, no `ip netns`).
    init(_ name: String, rooms: Int = 0) throws {
        guard getuid() == 0 else { throw XCTSkip("the network lab needs root") }
        self.name = name
        // The lab's owner is this process: a run killed before its tear-down leaves a lab the next `up` removes.
        let result = try runCommand(
            [Paths.lab, "up", name, "", "\(rooms)"], environment: ["CAST_LAB_OWNER": "\(getpid())"], timeout: 60)
        guard result.status == 0 else {
            _ = try? runCommand([Paths.lab, "down", name], timeout: 30)
            throw LabError(message: "lab up \(name) failed: \(result.stderr)")
        }
    }

    /// Stops every daemon this lab started (by pid) and removes the namespaces.
    func tearDown() {
        // Every daemon is asked first and then waited for, so that their shut-downs overlap.
        for daemon in daemons { daemon.requestStop() }
        for daemon in daemons { daemon.stop() }
        daemons.removeAll()
        _ = try? runCommand([Paths.lab, "down", name], timeout: 30)
    }

    /// The host's lab address.
    func address(_ host: Host) -> String {
        (try? runCommand([Paths.lab, "addr", name, host.rawValue]).stdout.trimmingCharacters(
            in: .whitespacesAndNewlines)) ?? ""
    }

    /// Runs a command on a host (with the host's D-Bus, so avahi tools and our programs find its avahi-daemon).
    @discardableResult
    func run(on host: Host, _ arguments: [String], environment: [String: String] = [:], timeout: Double = 60)
        throws -> CommandResult
    {
        try runCommand(
            [Paths.lab, "exec", name, host.rawValue] + arguments, environment: environment, timeout: timeout)
    }

    /// Starts a long-running program on a host; stopped by `tearDown`. With `interactive`, its
    /// standard input is a pipe the test writes to (`Daemon.type`).
    func start(on host: Host, _ arguments: [String], environment: [String: String] = [:], interactive: Bool = false)
        throws -> Daemon
    {
        let daemon = try Daemon(
            [Paths.lab, "exec", name, host.rawValue] + arguments, environment: environment, interactive: interactive)
        daemons.append(daemon)
        return daemon
    }

    /// Runs a lab command (`avahi-restart`, `avahi-stop`, ...) for a host.
    func control(_ command: String, _ host: Host) throws {
        let result = try runCommand([Paths.lab, command, name, host.rawValue], timeout: 30)
        guard result.status == 0 else { throw LabError(message: "lab \(command) failed: \(result.stderr)") }
    }

    /// Limits what `host` sends on the lab link to `rate` (`tc tbf` inside the host's namespace, e.g. "600kbit");
    /// nil removes the limit. The root namespace is never shaped.
    func shape(_ host: Host, rate: String?) throws {
        let arguments = rate.map { ["shape", name, host.rawValue, $0] } ?? ["unshape", name, host.rawValue]
        let result = try runCommand([Paths.lab] + arguments, timeout: 30)
        guard result.status == 0 else { throw LabError(message: "lab \(arguments[0]) failed: \(result.stderr)") }
    }

    struct LabError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }
}

/// A background process whose output lines are collected as they come.
final class Daemon: @unchecked Sendable {
    // Invariant: `lock` guards `lines`; `process` is only started and stopped from the test's thread.
    private let process = Process()
    private let lock = NSLock()
    private var lines: [String] = []

    private let input: Pipe?

    init(_ arguments: [String], environment: [String: String], interactive: Bool = false) throws {
        input = interactive ? Pipe() : nil
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { $1 }
        process.environment = env
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = input ?? FileHandle.nullDevice
        readUntilEndOfFile(pipe.fileHandleForReading) { [weak self] data in
            guard let self else { return }
            guard !data.isEmpty else {
                // End of file: every writer (the program and anything it forked) has closed the pipe.
                return self.lock.withLock {
                    if !self.pending.isEmpty { self.lines.append(self.pending) }
                    self.pending = ""
                    self.ended = true
                }
            }
            let text = String(decoding: data, as: UTF8.self)
            self.lock.withLock {
                self.pending += text
                while let newline = self.pending.firstIndex(of: "\n") {
                    self.lines.append(String(self.pending[..<newline]))
                    self.pending = String(self.pending[self.pending.index(after: newline)...])
                }
            }
        }
        try process.run()
    }
    private var pending = ""
    /// The output pipe reached end of file: `lines` holds everything the program wrote.
    private var ended = false

    var pid: Int32 { process.processIdentifier }

    /// Writes a line to the program's standard input (interactive daemons only).
    func type(_ line: String) {
        input?.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Waits for the process to end (at most `timeout` seconds); its exit status, nil if still running. Once it
    /// has ended, `output` holds all it wrote: the exit is seen before the reader has taken the last lines from the
    /// pipe, so this also waits for the pipe's end of file (at most 2 s more, in case something the program
    /// forked still holds the pipe open).
    func waitForExit(timeout: Double = 10) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        guard !process.isRunning else { return nil }
        let drained = Date().addingTimeInterval(2)
        while !lock.withLock({ ended }) && Date() < drained { Thread.sleep(forTimeInterval: 0.005) }
        return exitStatus
    }
    var isRunning: Bool { process.isRunning }
    /// The exit status, once the process has ended.
    var exitStatus: Int32? { process.isRunning ? nil : process.terminationStatus }
    var output: [String] { lock.withLock { lines } }

    /// Waits until a line contains `text`; returns it, or nil after `timeout` seconds.
    func waitForLine(containing text: String, timeout: Double = 10, after index: Int = 0) -> String? {
        waitForLine(timeout: timeout, after: index) { $0.contains(text) }
    }

    /// Waits until a line satisfies `matches`; returns it, or nil after `timeout` seconds.
    func waitForLine(timeout: Double = 10, after index: Int = 0, where matches: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let line = output.dropFirst(index).first(where: matches) { return line }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return nil
    }

    /// SIGTERM to this process, by pid. A program started under `unshare --fork` (a group member in a time
    /// namespace) is `unshare`'s child, and `unshare` ignores SIGTERM while it waits: its child, which this test also
    /// started, is asked directly, and `unshare` ends with it.
    func requestStop() {
        guard process.isRunning else { return }
        let pid = process.processIdentifier
        kill(pid, SIGTERM)
        let command = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? ""
        if command.hasPrefix("unshare") {
            for child in Processes.children(of: pid) { kill(child, SIGTERM) }
        }
    }

    /// `requestStop`, then SIGKILL after 3 s; only this process, by pid.
    func stop() {
        guard process.isRunning else { return }
        requestStop()
        let deadline = Date().addingTimeInterval(3)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning {
            // Said, because each such process costs every test that starts it 3 s of its tear-down.
            print(
                "harness: \(process.arguments?.joined(separator: " ") ?? "?") did not end within 3 s of SIGTERM: killed"
            )
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
    }
}

extension Daemon {
    /// The port castd printed in its "listening on port N" line.
    func listeningPort(timeout: Double = 10) throws -> UInt16 {
        let line = try XCTUnwrap(
            waitForLine(containing: "listening on port", timeout: timeout), "castd did not start: \(output)")
        return try XCTUnwrap(UInt16(line.split(separator: " ").drop { $0 != "port" }.dropFirst().first ?? ""), line)
    }
}

extension Lab {
    /// castd "Living Room" on the box, admitting anyone, recording what it plays into `work`:
    /// `frames.md5` (framemd5 video out), `audio.raw` (the ALSA capture: 48 kHz, `captureChannels` channels) and
    /// `events.jsonl`. Returns once it is advertised.
    func startRecordingReceiver(work: String, extra: [String] = [], captureChannels: Int = 2) throws
        -> (daemon: Daemon, port: UInt16)
    {
        let receiver = try start(
            on: .box,
            [
                Paths.castd, "--name", "Living Room", "--auth", "none", "--port", "0", "--state-dir", "\(work)/state",
                "--video-out", "framemd5:\(work)/frames.md5", "--audio-device",
                "castcapture:FILE=\(work)/audio.raw,CHANNELS=\(captureChannels)",
                "--events", "\(work)/events.jsonl",
            ] + extra,
            environment: ["ALSA_CONFIG_PATH": Media.alsaConfig])
        let port = try receiver.listeningPort()
        XCTAssertNotNil(receiver.waitForLine(containing: "advertised as"), "\(receiver.output)")
        return (receiver, port)
    }
}

/// A test in the lab: a lab of its own (named `labPrefix` + the process id) and a fresh work folder, both removed
/// afterwards.
class LabTestCase: XCTestCase {
    var lab: Lab!
    var work: String!

    /// A few letters that name this suite's lab (at most 14 with the pid).
    class var labPrefix: String { "e2x" }
    /// Receiver hosts beside the box (`Lab.Host.room1`…).
    class var labRooms: Int { 0 }

    override func setUpWithError() throws {
        lab = try Lab("\(Self.labPrefix)\(getpid() % 100000)", rooms: Self.labRooms)
        work = NSTemporaryDirectory() + "cast-\(Self.labPrefix)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
    }

    /// Skips, naming the kernel feature, where time namespaces do not exist (Linux < 5.6, CONFIG_TIME_NS off).
    func requireTimeNamespaces() throws {
        guard FileManager.default.fileExists(atPath: "/proc/self/timens_offsets") else {
            throw XCTSkip(
                "this kernel has no time namespaces (CONFIG_TIME_NS, Linux ≥ 5.6): /proc/self/timens_offsets is missing"
            )
        }
    }

    /// `cast status NAME --json` from the phone, as the sender whose settings are in `work`/sender: the status object
    /// and its `sync` (a group member's offset from the group and its trim).
    func memberStatus(_ name: String) throws -> (object: [String: Any], sync: [String: Double], stdout: String) {
        let status = try lab.run(
            on: .phone, [Paths.cast, "status", name, "--json"], environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        let object = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any], status.stderr)
        let fields = try XCTUnwrap(object["sync"] as? [String: Any], "\(name): \(status.stdout)")
        // The numbers (`limited` beside them is a flag).
        var sync: [String: Double] = [:]
        for key in ["offsetSeconds", "trimPPM"] { sync[key] = (fields[key] as? NSNumber)?.doubleValue }
        return (object, sync, status.stdout)
    }

    override func tearDown() {
        lab?.tearDown()
        if let work { try? FileManager.default.removeItem(atPath: work) }
    }
}
