public import Foundation

/// The standard output of a tool (`ffmpeg`, `ffprobe`, found on PATH) as bytes, its standard error dropped.
/// - Throws: when it cannot be started, or when it exits non-zero (the error names the command).
public func toolOutput(_ arguments: [String]) throws -> Data {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw NSError(
            domain: "toolOutput", code: Int(process.terminationStatus),
            userInfo: [NSLocalizedDescriptionKey: "\(arguments.joined(separator: " ")) failed"])
    }
    return data
}
