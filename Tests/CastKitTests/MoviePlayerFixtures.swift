import CastKit
import CastProtocol
import CastTestSupport
import Foundation
import Glibc
import XCTest

/// Media, ALSA and a receiver for the movie player tests.
enum MovieFixtures {
    /// The package root, from this file's path.
    static let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Points ALSA at scripts/asound.conf (`null`, and `default` over it). Must happen before the process opens a
    /// PCM; later uses do nothing.
    static let alsa: Void = {
        setenv("ALSA_CONFIG_PATH", package.appendingPathComponent("scripts/asound.conf").path, 1)
    }()

    /// Local outputs for tests: audio to ALSA's `null`, video as given (none by default).
    static func outputs(video: MoviePlayerController.Outputs.Video = .none) -> MoviePlayerController.Outputs {
        _ = alsa
        return MoviePlayerController.Outputs(audioDevice: "null", video: video)
    }

    /// A fresh folder for one test.
    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("castkit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// An H.264/AAC mp4 of `seconds` (320×240, 25 fps, a key frame every second, 440 Hz).
    static func clip(seconds: Int, in folder: URL) throws -> URL {
        let url = folder.appendingPathComponent("clip\(seconds).mp4")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=\(seconds)",
            "-f", "lavfi", "-i", "sine=frequency=440:duration=\(seconds)", "-c:v", "libx264", "-g", "25",
            "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", url.path,
        ]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "ffmpeg failed")
        return url
    }

    /// The presentation times (seconds) of the frames in a framemd5 listing.
    static func frameTimes(_ path: String) -> [Double] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        var timeBase = 1.0 / 25
        var times: [Double] = []
        for line in text.split(separator: "\n") {
            if line.hasPrefix("#tb 0: ") {
                let parts = line.dropFirst(7).split(separator: "/").compactMap { Double($0) }
                if parts.count == 2 { timeBase = parts[0] / parts[1] }
            } else if !line.hasPrefix("#") {
                let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                if fields.count >= 3, let pts = Double(fields[2]) { times.append(pts * timeBase) }
            }
        }
        return times
    }

    /// The directory holding `castd`: next to the test bundle.
    static var binaries: URL { BuiltPrograms.directory }

    /// Skips the test unless `castd` is built next to the tests.
    static func requireCastd() throws {
        try XCTSkipUnless(
            FileManager.default.fileExists(atPath: binaries.appendingPathComponent("castd").path),
            "castd is not built next to the tests")
    }

}

/// A castd on loopback without discovery, pairing, sound or window; killed by pid.
final class LoopbackReceiver: @unchecked Sendable {
    // Invariant: `lock` guards `lines` and `pending`; `process` is started in init and killed in `kill()` by the
    // test's thread only.
    private let process = Process()
    private let lock = NSLock()
    private var lines: [String] = []
    private var pending = ""
    /// The port it listens on.
    private(set) var port: UInt16 = 0

    /// The name it was started with.
    let name: String

    /// Starts castd; `port` 0 lets it pick a free one (a restart passes the port it had). `audioDevice`: its ALSA
    /// output ("none", or a capture of `scripts/asound.conf`, which castd finds through this process's environment).
    init(
        stateDirectory: String, videoOut: String = "none", port: UInt16 = 0, name: String = "Test Box",
        auth: String = "none", audioDevice: String = "none"
    ) throws {
        self.name = name
        process.executableURL = MovieFixtures.binaries.appendingPathComponent("castd")
        process.arguments = [
            "--name", name, "--auth", auth, "--listen", "127.0.0.1", "--port", String(port), "--no-advertise",
            "--audio-device", audioDevice, "--video-out", videoOut, "--state-dir", stateDirectory,
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard !data.isEmpty, let self else { return }
            lock.withLock {
                pending += String(decoding: data, as: UTF8.self)
                while let newline = pending.firstIndex(of: "\n") {
                    lines.append(String(pending[..<newline]))
                    pending = String(pending[pending.index(after: newline)...])
                }
            }
        }
        try process.run()
        var line: String?
        waitUntil(timeout: 10) {
            line = output.first { $0.contains("listening on port") }
            return line != nil || !process.isRunning
        }
        let text = try XCTUnwrap(line, "castd did not start: \(output)")
        self.port = try XCTUnwrap(UInt16(text.split(separator: " ").drop { $0 != "port" }.dropFirst().first ?? ""))
    }

    var output: [String] { lock.withLock { lines } }

    /// The receiver, as a sender names it by address.
    var description: ReceiverDescription {
        ReceiverDescription(name: name, id: "", host: "127.0.0.1", port: port)
    }

    /// Ends castd by its pid: `signal` (SIGTERM by default), then SIGKILL after 3 s.
    func kill(signal: Int32 = SIGTERM) {
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, signal)
        if !waitUntil(timeout: 3, { !process.isRunning }) { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// What a movie player posted and yielded, with the time each arrived.
final class MoviePlayerLog: @unchecked Sendable {
    // Invariant: `lock` guards `notifications`, `events` and `tokens`.
    private let lock = NSLock()
    private var notifications: [(name: Notification.Name, reason: FinishReason?, time: Date)] = []
    private var events: [MoviePlayerEvent] = []
    private var tokens: [any NSObjectProtocol] = []
    private var task: Task<Void, Never>?

    static let names: [Notification.Name] = [
        .moviePlayerPlaybackStateDidChange, .moviePlayerLoadStateDidChange, .moviePlayerPlaybackDidFinish,
        .moviePlayerIsAirPlayVideoActiveDidChange, .moviePlayerReadyForDisplayDidChange, .movieDurationAvailable,
        .movieNaturalSizeAvailable, .movieMediaTypesAvailable, .moviePlayerTimedMetadataUpdated,
        .moviePlayerWillEnterFullscreen,
        .moviePlayerDidEnterFullscreen, .moviePlayerWillExitFullscreen, .moviePlayerDidExitFullscreen,
        .moviePlayerNowPlayingMovieDidChange, .moviePlayerScalingModeDidChange, .movieSourceTypeAvailable,
    ]

    init(_ player: MoviePlayerController) {
        let tokens = Self.names.map { name in
            NotificationCenter.default.addObserver(forName: name, object: player, queue: nil) { [weak self] note in
                let reason = note.userInfo?[MoviePlayerController.finishReasonUserInfoKey] as? FinishReason
                self?.lock.withLock { self?.notifications.append((note.name, reason, Date())) }
            }
        }
        let stream = player.events()
        let task = Task { [weak self] in
            for await event in stream { self?.lock.withLock { self?.events.append(event) } }
        }
        lock.withLock {
            self.tokens = tokens
            self.task = task
        }
    }

    deinit {
        for token in tokens { NotificationCenter.default.removeObserver(token) }
        task?.cancel()
    }

    var names: [Notification.Name] { lock.withLock { notifications.map(\.name) } }
    var timedNames: [(name: Notification.Name, reason: FinishReason?, time: Date)] { lock.withLock { notifications } }
    var streamed: [MoviePlayerEvent] { lock.withLock { events } }

    /// The finish reason, once a finish was posted.
    var finishReason: FinishReason? {
        lock.withLock { notifications.first { $0.name == .moviePlayerPlaybackDidFinish }?.reason }
    }

    /// The playback states the stream yielded, in order.
    /// The playback states from the stream, once it has caught up with the notifications posted so far (the stream
    /// is read by a task, which may lag the notification that a test waited for by a moment).
    var states: [PlaybackState] {
        let posted = names.count
        waitUntil(timeout: 2) { streamed.count >= posted }
        return streamed.compactMap { if case .playbackStateDidChange(let state) = $0 { state } else { nil } }
    }

    /// How many notifications of `name` were posted.
    func count(_ name: Notification.Name) -> Int { names.filter { $0 == name }.count }
}

/// A test of local playback: a fresh folder for its files (removed afterwards), and no route selected.
class LocalPlaybackTestCase: XCTestCase {
    /// The test's own folder.
    var folder: URL!

    override func setUpWithError() throws {
        folder = try MovieFixtures.folder()
        CastRoute.selected = nil
    }

    override func tearDown() {
        if let folder { try? FileManager.default.removeItem(at: folder) }
    }
}
