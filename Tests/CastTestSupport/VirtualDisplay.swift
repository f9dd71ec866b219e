public import Foundation
import XCTest

/// A private X server (Xvfb, 1280×720×24 unless asked otherwise) for a window under test. Programs reach it with `DISPLAY=:N`; the lab's
/// hosts share the file system, so they use its socket under /tmp/.X11-unix (the abstract socket Xvfb also opens
/// belongs to the root network namespace and is not seen there).
///
/// Xvfb picks the display number itself (`-displayfd`: the first free one, taken under the X server's own lock) and
/// says it once it listens, so test processes that start displays at the same moment never pick the same number.
public final class VirtualDisplay {
    public let number: Int
    /// The screen's size in pixels.
    public let width: Int
    public let height: Int
    private let process: Process
    private let savedDisplay: String??

    /// The X server to start: Xvfb, or TigerVNC's Xvnc (whose screen changes size: `xrandr -s WxH`; it listens for
    /// no VNC viewer here).
    public enum Server: Sendable {
        case xvfb
        case xvnc

        var path: String { self == .xvfb ? "/usr/bin/Xvfb" : "/usr/bin/Xvnc" }

        func arguments(width: Int, height: Int) -> [String] {
            switch self {
            case .xvfb: ["-screen", "0", "\(width)x\(height)x24"]
            case .xvnc: ["-geometry", "\(width)x\(height)", "-depth", "24", "-rfbport", "-1", "-SecurityTypes", "None"]
            }
        }
    }

    /// Starts Xvfb (or `server`) and waits (a hang bound of 10 s) until it listens; skips the test without it. With
    /// `settingDISPLAY`, this process's DISPLAY names it until `stop`. `extraArguments` go to the server (such as
    /// `-auth FILE`, or `-extension MIT-SHM`).
    public static func start(
        settingDISPLAY: Bool = false, width: Int = 1280, height: Int = 720, server: Server = .xvfb,
        extraArguments: [String] = []
    ) throws -> VirtualDisplay {
        guard FileManager.default.isExecutableFile(atPath: server.path) else {
            throw XCTSkip("\(server.path) is not installed")
        }
        return try VirtualDisplay(
            settingDISPLAY: settingDISPLAY, width: width, height: height, server: server, extraArguments: extraArguments
        )
    }

    private init(settingDISPLAY: Bool, width: Int, height: Int, server: Server, extraArguments: [String]) throws {
        self.width = width
        self.height = height
        process = Process()
        process.executableURL = URL(fileURLWithPath: server.path)
        process.arguments =
            ["-displayfd", "1"] + server.arguments(width: width, height: height) + ["-nolisten", "tcp"]
            + extraArguments
        let announced = Pipe()
        process.standardOutput = announced
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Xvfb writes "N\n" on descriptor 1 once its sockets listen; the pipe ends if it exits first.
        let reader = announced.fileHandleForReading
        let line = Background { () -> String in
            var text = ""
            while !text.contains("\n") {
                let data = reader.availableData
                if data.isEmpty { break }
                text += String(decoding: data, as: UTF8.self)
            }
            return text
        }
        let text = (try? line.value(timeout: 10)) ?? ""
        guard let number = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            throw StartError(description: "\(server.path) did not start (it said \(text.debugDescription))")
        }
        self.number = number
        if settingDISPLAY {
            savedDisplay = .some(ProcessInfo.processInfo.environment["DISPLAY"])
            setenv("DISPLAY", ":\(number)", 1)
        } else {
            savedDisplay = nil
        }
    }

    /// DISPLAY for programs that should use it.
    public var display: String { ":\(number)" }

    /// Stops this server, by its pid, and gives DISPLAY back when `start` set it.
    public func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
        if case .some(let saved) = savedDisplay {
            if let saved { setenv("DISPLAY", saved, 1) } else { unsetenv("DISPLAY") }
        }
    }

    /// The whole screen now as RGB24 bytes (width×height×3), without the pointer (x11grab draws it by default, at the
    /// screen's centre) unless `pointer`. ffmpeg writes into a file: 20 s is a hang bound.
    public func rgbBytes(pointer: Bool = false) throws -> Data {
        let path = NSTemporaryDirectory() + "x11grab-\(UUID().uuidString).rgb"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let ffmpeg = Process()
        ffmpeg.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        ffmpeg.arguments = [
            "ffmpeg", "-v", "error", "-y", "-f", "x11grab", "-draw_mouse", pointer ? "1" : "0", "-video_size",
            "\(width)x\(height)", "-i", display,
            "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", path,
        ]
        ffmpeg.standardOutput = FileHandle.nullDevice
        ffmpeg.standardError = FileHandle.nullDevice
        try ffmpeg.run()
        if !waitUntil(timeout: 20, { !ffmpeg.isRunning }) { kill(ffmpeg.processIdentifier, SIGKILL) }
        ffmpeg.waitUntilExit()
        let data = (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()
        guard ffmpeg.terminationStatus == 0, data.count == width * height * 3 else {
            throw StartError(
                description: "x11grab of \(display) gave \(data.count) bytes (exit \(ffmpeg.terminationStatus))")
        }
        return data
    }

    /// Xvfb did not say which display it serves, or its screen could not be read.
    public struct StartError: Error, CustomStringConvertible {
        public let description: String
    }
}
