import CastBase
import CastTestSupport
import Foundation
import XCTest

/// `cast mirror --audio PCM` in the lab with the real programs: the sender's sound comes from an ALSA `file` PCM whose
/// infile is a FIFO this test writes (`castsource` in scripts/asound.conf), castd's goes into the FIFO its `file`
/// PCM writes (`FIFOCapture`); the sender's screen is one Xvfb, castd's full-screen window another.
final class MirrorAudioTests: LabTestCase {
    override class var labPrefix: String { "ma" }

    private var senderScreen: VirtualDisplay?
    private var receiverScreen: VirtualDisplay?

    override func setUpWithError() throws {
        try super.setUpWithError()
        receiverScreen = try VirtualDisplay.start()
        senderScreen = try VirtualDisplay.start()
    }

    override func tearDown() {
        lab?.tearDown()
        senderScreen?.stop()
        receiverScreen?.stop()
        super.tearDown()
    }

    /// castd (full screen, its sound into `capture`) and `cast mirror --audio` reading `source`, playing.
    private func startMirroring() throws -> (
        receiver: Daemon, mirror: Daemon, capture: FIFOCapture, source: SoundSource
    ) {
        let capture = try FIFOCapture(path: "\(work!)/castd-audio.fifo")
        let receiver = try lab.start(
            on: .box,
            [
                Paths.castd, "--name", "Living Room", "--port", "0", "--state-dir", "\(work!)/state", "--video-out",
                "fullscreen", "--audio-device", "castcapture:FILE=\(capture.path),CHANNELS=2", "--auth", "none",
            ],
            environment: ["DISPLAY": receiverScreen!.display, "ALSA_CONFIG_PATH": Media.alsaConfig])
        XCTAssertNotNil(receiver.waitForLine(containing: "advertised as"), "\(receiver.output)")

        let source = try SoundSource(path: "\(work!)/sender-audio.fifo")
        let mirror = try lab.start(
            on: .phone,
            [Paths.cast, "mirror", "--to", "Living Room", "--json", "--audio", "castsource:FILE=\(source.path)"],
            environment: [
                "XDG_CONFIG_HOME": "\(work!)/sender", "DISPLAY": senderScreen!.display,
                "ALSA_CONFIG_PATH": Media.alsaConfig,
            ])
        XCTAssertNotNil(
            mirror.waitForLine(containing: #""state":"playing""#, timeout: 20),
            "cast mirror: \(mirror.output)\ncastd: \(receiver.output.suffix(12))")
        XCTAssertNotNil(mirror.waitForLine(containing: #""audio""#, timeout: 20), "castd says it plays sound")
        return (receiver, mirror, capture, source)
    }

    /// A tone of 440 Hz after silence, written to the sender's FIFO in real time: it reaches castd's ALSA output, at
    /// its pitch, within a bounded delay.
    func testTheSendersSoundIsPlayedByTheReceiver() throws {
        let (receiver, mirror, capture, source) = try startMirroring()
        defer { source.stop() }
        // The tone starts now; castd's output must carry it within a generous hang bound.
        let toneStart = source.startTone(at: MonotonicClock.nanoseconds())
        XCTAssertTrue(
            waitUntil(timeout: 20) {
                Capture.beepOnset(in: capture.bytes, from: 0) != nil && capture.total > 48000 * 4 * 2
            },
            "castd wrote \(capture.total) bytes: \(receiver.output.suffix(12))")
        let bytes = capture.bytes
        let onset = try XCTUnwrap(Capture.beepOnset(in: bytes, from: 0), "the tone's onset in castd's output")
        let reads = capture.reads
        let arrival = try XCTUnwrap(reads.first { $0.total > onset }?.arrival)
        let delay = Double(arrival - toneStart) / 1e6
        let tone = bytes[bytes.startIndex + onset..<min(bytes.endIndex, bytes.startIndex + onset + 48000 * 4)]
        let frequency = Media.toneFrequency(ofCapture: Data(tone))
        print(
            "mirrored sound: tone at \(String(format: "%.1f", frequency)) Hz, heard \(String(format: "%.1f", delay)) ms after it was written"
        )
        XCTAssertEqual(frequency, 440, accuracy: 440 * 0.03, "castd plays the sender's tone at its pitch")
        XCTAssertLessThan(delay, 2000, "the sound is live, not buffered")

        let stop = try lab.run(
            on: .phone, [Paths.cast, "stop", "Living Room"], environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        XCTAssertEqual(stop.status, 0, stop.stderr)
        XCTAssertEqual(mirror.waitForExit(timeout: 20), 0, "cast mirror: \(mirror.output.suffix(8))")
        capture.stop()
    }
}

/// The sender's sound in the lab: a FIFO (opened read-write here, so neither side's open waits) that a thread writes
/// S16 stereo 48 kHz into in real time, 10 ms a write and 40 ms ahead (the `file` PCM gives silence for what the
/// FIFO lacks; the pipe holds 4 KiB, about 21 ms, so that what is written is read at once): silence, and a 440 Hz
/// tone from the moment `startTone` says.
///
/// Thread-safety: `tone` and `stopped` are read and written under `lock`; the rest is set in init.
private final class SoundSource: @unchecked Sendable {
    let path: String
    private let fd: Int32
    private let lock = NSLock()
    private var tone: (from: Int64, until: Int64)?
    private var stopped = false

    init(path: String) throws {
        self.path = path
        guard mkfifo(path, 0o666) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        _ = fcntl(fd, 1031 /* F_SETPIPE_SZ */, Int32(4096))
        let thread = Thread { [self] in run() }
        thread.name = "sound source"
        thread.start()
    }

    /// Plays the tone from `moment` (CLOCK_MONOTONIC ns; at least 40 ms ahead to be exact) for `seconds`; returns
    /// `moment`.
    @discardableResult
    func startTone(at moment: Int64, seconds: Double = 3600) -> Int64 {
        lock.withLock { tone = (moment, moment + Int64(seconds * 1e9)) }
        return moment
    }

    func stop() { lock.withLock { stopped = true } }

    private func run() {
        let start = MonotonicClock.nanoseconds()
        var frame = 0
        while !lock.withLock({ stopped }) {
            // The frame due now is `frame`'s piece when it is at most 40 ms ahead of the clock.
            let due = start + Int64(frame) * 1_000_000_000 / 48000
            let ahead = due - MonotonicClock.nanoseconds()
            if ahead > 40_000_000 {
                Thread.sleep(forTimeInterval: Double(ahead - 40_000_000) / 1e9)
                continue
            }
            let tone = lock.withLock { self.tone }
            var piece = [Int16](repeating: 0, count: 480 * 2)
            for index in 0..<480 {
                let time = start + Int64(frame + index) * 1_000_000_000 / 48000
                guard let tone, time >= tone.from, time < tone.until else { continue }
                let value = Int16(12000 * sin(2 * Double.pi * 440 * Double(time - tone.from) / 1e9))
                piece[index * 2] = value.littleEndian
                piece[index * 2 + 1] = value.littleEndian
            }
            let written = piece.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written == piece.count * 2 else { break }
            frame += 480
        }
        close(fd)
    }
}
