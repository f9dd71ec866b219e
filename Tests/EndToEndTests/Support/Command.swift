import Foundation
import XCTest

/// Where the package lives and where the built programs are.
enum Paths {
    /// The package root, from this file's path.
    static let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    /// The lab script.
    static let lab = package.appendingPathComponent("scripts/lab").path
    /// The directory holding `castd` and `cast`: next to the test bundle.
    static let binaries: URL = {
        if let dir = ProcessInfo.processInfo.environment["CAST_BIN_DIR"] { return URL(fileURLWithPath: dir) }
        var url = Bundle.main.bundleURL
        while url.path != "/" && !FileManager.default.fileExists(atPath: url.appendingPathComponent("castd").path) {
            url = url.deletingLastPathComponent()
        }
        return url
    }()
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
    // keep them open long after the command exits, so waiting for end-of-file could hang.
    let collector = OutputCollector()
    out.fileHandleForReading.readabilityHandler = { collector.append($0.availableData, isOut: true) }
    err.fileHandleForReading.readabilityHandler = { collector.append($0.availableData, isOut: false) }
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
    var timedOut = false
    if process.isRunning {
        timedOut = true
        kill(process.processIdentifier, SIGKILL)
    }
    process.waitUntilExit()
    Thread.sleep(forTimeInterval: 0.05)
    out.fileHandleForReading.readabilityHandler = nil
    err.fileHandleForReading.readabilityHandler = nil
    for (pipe, isOut) in [(out, true), (err, false)] {
        // Whatever is already buffered, without waiting for end-of-file.
        let fd = pipe.fileHandleForReading.fileDescriptor
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { break }
            collector.append(Data(buffer[0..<n]), isOut: isOut)
        }
    }
    let seconds = Date().timeIntervalSince(start)
    let (stdout, stderr) = collector.get()
    if timedOut {
        XCTFail("\(arguments.joined(separator: " ")) did not finish within \(timeout) s; stderr: \(stderr)")
    }
    return CommandResult(status: process.terminationStatus, stdout: stdout, stderr: stderr, seconds: seconds)
}

/// Collects a process's output from two reader threads.
final class OutputCollector: @unchecked Sendable {
    // Invariant: `lock` guards both strings.
    private let lock = NSLock()
    private var out = Data()
    private var err = Data()
    func append(_ data: Data, isOut: Bool) {
        lock.withLock {
            if isOut { out.append(data) } else { err.append(data) }
        }
    }
    func get() -> (String, String) {
        lock.withLock { (String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self)) }
    }
}

/// Polls `condition` every 20 ms until it holds (true) or `timeout` seconds have passed (false).
func waitUntil(timeout: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        if Date() > deadline { return false }
        Thread.sleep(forTimeInterval: 0.02)
    }
    return true
}
