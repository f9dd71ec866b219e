import CastKit
import CastTestSupport
import Foundation
import XCTest

/// `ScreenMirroring` with the real helper and a real castd on loopback (no discovery, `--auth none`, no window: the
/// receiver decodes the pictures and reports them); the sender's screen is an Xvfb of the test's own.
final class ScreenMirroringTests: XCTestCase {
    private var folder: URL!
    private var receiver: LoopbackReceiver?
    private var screen: VirtualDisplay?

    override func setUpWithError() throws {
        try MovieFixtures.requireCastd()
        folder = try MovieFixtures.folder()
        screen = try VirtualDisplay.start()
    }

    override func tearDown() {
        receiver?.kill()
        screen?.stop()
        if let folder { try? FileManager.default.removeItem(at: folder) }
    }

    /// What the delegate and the notifications said, in order.
    private final class Recorder: ScreenMirroringDelegate, @unchecked Sendable {
        // Invariant: `lock` guards `states`, `errors`, `notified` and `notes`; the observers are added in init and removed in
        // deinit only.
        private let lock = NSLock()
        private var states: [ScreenMirroring.State] = []
        private var errors: [CastError] = []
        private var notified: [Notification.Name] = []
        private var notes: [String] = []
        private var observers: [any NSObjectProtocol] = []

        init(_ mirroring: ScreenMirroring) {
            for name in [Notification.Name.screenMirroringStateDidChange, .screenMirroringDidFail] {
                observers.append(
                    NotificationCenter.default.addObserver(forName: name, object: mirroring, queue: nil) {
                        [weak self] note in
                        self?.lock.withLock { self?.notified.append(note.name) }
                    })
            }
            mirroring.delegate = self
        }

        deinit { for observer in observers { NotificationCenter.default.removeObserver(observer) } }

        func screenMirroringDidChangeState(_ mirroring: ScreenMirroring) {
            let state = mirroring.currentState
            lock.withLock { states.append(state) }
        }

        func screenMirroring(_ mirroring: ScreenMirroring, didFailWithError error: CastError) {
            lock.withLock { errors.append(error) }
        }

        func screenMirroring(_ mirroring: ScreenMirroring, didNote note: String) {
            lock.withLock { notes.append(note) }
        }

        var noted: [String] { lock.withLock { notes } }

        var seen: (states: [ScreenMirroring.State], errors: [CastError], notified: [Notification.Name]) {
            lock.withLock { (states, errors, notified) }
        }
    }

    private func mirroring(display: String? = nil, audio: String? = nil) -> ScreenMirroring {
        ScreenMirroring(
            display: display ?? screen!.display, audio: audio,
            configuration: CastKitConfiguration(
                configDirectory: folder.appendingPathComponent("sender").path, senderName: "castkit-tests"))
    }

    /// Start to a receiver's description: the state goes starting → mirroring (the receiver decodes the screen's
    /// pictures), the figures come; stop: ended as the user's exit, each change told to the delegate and posted.
    func testStartShowsTheScreenAndStopEndsIt() throws {
        let receiver = try LoopbackReceiver(stateDirectory: folder.appendingPathComponent("state").path)
        self.receiver = receiver
        let mirroring = mirroring()
        let recorder = Recorder(mirroring)
        try mirroring.start(on: receiver.description)
        XCTAssertTrue(
            waitUntil(timeout: 20) { mirroring.currentState == .mirroring },
            "\(mirroring.currentState) \(receiver.output)")
        XCTAssertTrue(waitUntil(timeout: 10) { mirroring.figures != nil })
        XCTAssertEqual(mirroring.figures?.width, 1280)
        XCTAssertEqual(mirroring.figures?.height, 720)
        XCTAssertEqual(mirroring.receivers.map(\.port), [receiver.port])
        XCTAssertThrowsError(try mirroring.start(on: receiver.description), "one mirroring at a time") { error in
            XCTAssertEqual((error as? CastError)?.kind, .usage)
        }

        mirroring.stop()
        XCTAssertTrue(
            waitUntil(timeout: 20) { mirroring.currentState == .ended(.userExited) }, "\(mirroring.currentState)")
        XCTAssertTrue(waitUntil(timeout: 5) { recorder.seen.states.count == 3 }, "\(recorder.seen.states)")
        let seen = recorder.seen
        XCTAssertEqual(seen.states, [.starting, .mirroring, .ended(.userExited)])
        XCTAssertEqual(seen.notified, Array(repeating: .screenMirroringStateDidChange, count: 3))
        XCTAssertTrue(seen.errors.isEmpty, "\(seen.errors)")
        XCTAssertTrue(
            receiver.output.contains { $0.contains("finished") }, "castd ends the session: \(receiver.output.suffix(5))"
        )
    }

    /// What the helper notes reaches the program: here a display without MIT-SHM, read through its socket (mirroring
    /// goes on), told to the delegate and posted with its text; the figures name the encoder.
    func testTheHelpersNotesReachTheDelegate() throws {
        let receiver = try LoopbackReceiver(stateDirectory: folder.appendingPathComponent("state").path)
        self.receiver = receiver
        let unshared = try VirtualDisplay.start(extraArguments: ["-extension", "MIT-SHM"])
        defer { unshared.stop() }
        let mirroring = mirroring(display: unshared.display)
        let recorder = Recorder(mirroring)
        let posted = Flag()
        let observer = NotificationCenter.default.addObserver(
            forName: .screenMirroringDidNote, object: mirroring, queue: nil
        ) { note in
            if (note.userInfo?[ScreenMirroring.noteUserInfoKey] as? String)?.contains("no MIT-SHM") == true {
                posted.set()
            }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try mirroring.start(on: receiver.description)
        XCTAssertTrue(
            waitUntil(timeout: 20) { mirroring.currentState == .mirroring },
            "\(mirroring.currentState) \(receiver.output)")
        XCTAssertTrue(
            recorder.noted.contains(
                "the X11 display shares no memory with this process (no MIT-SHM): the screen comes through its socket"),
            "\(recorder.noted)")
        XCTAssertTrue(posted.isSet)
        XCTAssertTrue(waitUntil(timeout: 10) { mirroring.figures != nil })
        XCTAssertTrue(
            ["libx264", "h264_vaapi"].contains(mirroring.figures?.encoder ?? ""),
            "\(String(describing: mirroring.figures))")
        mirroring.stop()
        XCTAssertTrue(
            waitUntil(timeout: 20) { mirroring.currentState == .ended(.userExited) }, "\(mirroring.currentState)")
    }

    /// No display to capture: `start` throws a usage error, the delegate hears it, the state says it ended in error.
    func testNoDisplayFailsWithAUsageError() throws {
        let receiver = try LoopbackReceiver(stateDirectory: folder.appendingPathComponent("state").path)
        self.receiver = receiver
        let mirroring = mirroring(display: ":199")
        let recorder = Recorder(mirroring)
        XCTAssertThrowsError(try mirroring.start(on: receiver.description)) { error in
            XCTAssertEqual((error as? CastError)?.kind, .usage, "\(error)")
            XCTAssertTrue("\(error)".contains("cannot open the X11 display :199"), "\(error)")
        }
        XCTAssertEqual(mirroring.currentState, .ended(.playbackError))
        XCTAssertEqual(mirroring.lastError?.kind, .usage)
        let seen = recorder.seen
        XCTAssertEqual(seen.states, [.starting, .ended(.playbackError)])
        XCTAssertEqual(seen.errors.map(\.kind), [.usage])
        XCTAssertEqual(
            seen.notified, [.screenMirroringStateDidChange, .screenMirroringDidFail, .screenMirroringStateDidChange])
    }

    /// A receiver that is not there: `start` throws, and the helper it started is gone (its pipes closed).
    func testAReceiverThatIsNotThereFails() throws {
        let receiver = try LoopbackReceiver(stateDirectory: folder.appendingPathComponent("state").path)
        let gone = receiver.description
        receiver.kill()
        let mirroring = mirroring()
        XCTAssertThrowsError(try mirroring.start(on: gone)) { error in
            XCTAssertNotEqual((error as? CastError)?.kind, .usage, "\(error)")
        }
        XCTAssertEqual(mirroring.currentState, .ended(.playbackError))
    }

    /// With a sound capture PCM (`audio`), the sound goes along (as Opus): a 440 Hz tone read from it reaches castd's
    /// ALSA output at its pitch. A capture PCM that does not open is a usage error.
    func testTheSoundGoesAlong() throws {
        let (receiver, capture) = try GroupFixtures.capturingReceiver("Living Room", in: folder)
        self.receiver = receiver
        defer { capture.stop() }
        // 30 s of the tone in a file the `castsource` PCM reads (then silence), as a capture would give it.
        let tone = folder.appendingPathComponent("tone.raw").path
        let ffmpeg = Process()
        ffmpeg.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        ffmpeg.arguments = [
            "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=30", "-ac", "2", "-ar",
            "48000", "-f", "s16le", tone,
        ]
        try ffmpeg.run()
        ffmpeg.waitUntilExit()
        XCTAssertEqual(ffmpeg.terminationStatus, 0, "ffmpeg made no tone")
        let refused = mirroring(audio: "castkitnosuchpcm")
        XCTAssertThrowsError(try refused.start(on: receiver.description)) { error in
            XCTAssertEqual((error as? CastError)?.kind, .usage, "\(error)")
            XCTAssertTrue("\(error)".contains("cannot open the sound capture castkitnosuchpcm"), "\(error)")
        }

        let mirroring = mirroring(audio: "castsource:FILE=\(tone)")
        try mirroring.start(on: receiver.description)
        defer { mirroring.stop() }
        XCTAssertTrue(
            waitUntil(timeout: 20) { mirroring.currentState == .mirroring },
            "\(mirroring.currentState) \(receiver.output)")
        // A second of sound at castd's output (48 kHz stereo S16), past the first: its left channel's zero crossings.
        XCTAssertTrue(
            waitUntil(timeout: 20) { capture.total > 48000 * 4 * 3 }, "castd wrote \(capture.total) bytes of sound")
        let bytes = capture.bytes
        let second = bytes.suffix(48000 * 4)
        var crossings = 0
        var last: Int16 = 0
        for index in stride(from: second.startIndex, to: second.endIndex - 3, by: 4) {
            let sample = Int16(bitPattern: UInt16(second[index]) | UInt16(second[index + 1]) << 8)
            if (sample >= 0) != (last >= 0) { crossings += 1 }
            last = sample
        }
        XCTAssertEqual(Double(crossings) / 2, 440, accuracy: 440 * 0.03, "the tone at its pitch")
        XCTAssertTrue(receiver.output.contains { $0.contains("mirror: sound in Opus") }, "\(receiver.output.suffix(8))")
    }
}
