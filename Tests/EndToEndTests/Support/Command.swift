import CastTestSupport
import Foundation
import XCTest

/// Where the package lives and where the built programs are.
enum Paths {
    /// The package root, from this file's path.
    static let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    /// The lab script.
    static let lab = package.appendingPathComponent("scripts/lab").path
    /// The lab relay that holds each chunk of each direction for a random delay (Wi-Fi-like latency and jitter).
    static let jitterRelay = package.appendingPathComponent("scripts/jitter-relay").path
    /// The directory holding `castd` and `cast`: next to the test bundle.
    static var binaries: URL { BuiltPrograms.directory }
    static var castd: String { binaries.appendingPathComponent("castd").path }
    static var cast: String { binaries.appendingPathComponent("cast").path }
    /// A program of Examples/, built beside them.
    static func example(_ name: String) -> String { binaries.appendingPathComponent(name).path }
}

/// The outcome of a finished command.
struct CommandResult {
    var status: Int32
    var stdout: String
    var stderr: String
    var seconds: Double
}

/// Runs a program to completion, killing it (by pid) if it outlives `timeout`: a hang fails the test, not the suite.
@discardableResult
func runCommand(_ arguments: [String], environment: [String: String] = [:], timeout: Double = 60, input: Data? = nil)
    throws -> CommandResult
{
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    env.merge(environment) { $1 }
    process.environment = env
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    let stdin = Pipe()
    process.standardInput = stdin
    let start = Date()
    try process.run()
    if let input { stdin.fileHandleForWriting.write(input) }
    try? stdin.fileHandleForWriting.close()
    // Output is collected as it comes: a daemon that the command forks may inherit the pipes and
    // keep them open long after the command exits, so the wait for end-of-file below is bounded.
    let collector = OutputCollector()
    for (pipe, isOut) in [(out, true), (err, false)] {
        readUntilEndOfFile(pipe.fileHandleForReading) { collector.append($0, isOut: isOut) }
    }
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
    var timedOut = false
    if process.isRunning {
        timedOut = true
        kill(process.processIdentifier, SIGKILL)
    }
    process.waitUntilExit()
    // The exit is seen before the readers have taken the last output: wait for both pipes' end of file, but not
    // for ever (something the command forked may hold them open; what came until then is the output).
    _ = waitUntil(timeout: 1) { collector.bothEnded }
    let seconds = Date().timeIntervalSince(start)
    let (stdout, stderr) = collector.get()
    if timedOut {
        XCTFail("\(arguments.joined(separator: " ")) did not finish within \(timeout) s; stderr: \(stderr)")
    }
    return CommandResult(status: process.terminationStatus, stdout: stdout, stderr: stderr, seconds: seconds)
}

/// Calls `received` from a thread of its own with what arrives on `handle`, and once with empty data at end of file
/// (every writer has closed the pipe). Foundation's `readabilityHandler` is not used: on Linux it does not always
/// report the end of file (4 runs in 12 of a two-line program), so a test could not know it had read everything.
/// The thread keeps `handle` open until then.
func readUntilEndOfFile(_ handle: FileHandle, _ received: @escaping @Sendable (Data) -> Void) {
    Thread.detachNewThread {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(handle.fileDescriptor, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            received(Data(buffer[0..<count]))
        }
        received(Data())
    }
}

/// Collects a process's output from two reader threads, and notes each pipe's end of file.
final class OutputCollector: @unchecked Sendable {
    // Invariant: `lock` guards both strings.
    private let lock = NSLock()
    private var out = Data()
    private var err = Data()
    private var outEnded = false
    private var errEnded = false
    /// Appends what a reader got; empty data is the pipe's end of file.
    func append(_ data: Data, isOut: Bool) {
        lock.withLock {
            if data.isEmpty {
                if isOut { outEnded = true } else { errEnded = true }
            } else if isOut {
                out.append(data)
            } else {
                err.append(data)
            }
        }
    }
    func ended(isOut: Bool) -> Bool { lock.withLock { isOut ? outEnded : errEnded } }
    var bothEnded: Bool { lock.withLock { outEnded && errEnded } }
    func get() -> (String, String) {
        lock.withLock { (String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self)) }
    }
}
