import CastProtocol
import Foundation
import XCTest

@testable import CastSender

/// `cast`'s speaker decoder: the helper process `cast-decode` (built beside the test binary) against FFmpeg's own
/// decoding of the same file, sample for sample.
final class PCMDecoderProcessTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("pcm-decoder-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    /// Runs ffmpeg; its standard output.
    private func ffmpeg(_ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["ffmpeg", "-v", "error", "-y"] + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "ffmpeg \(arguments)")
        return data
    }

    /// Two tones, one a channel, as 44.1 kHz 16-bit WAV: no resampling, so the helper must match ffmpeg exactly.
    private func wave(seconds: Double) throws -> URL {
        let url = folder.appendingPathComponent("tones.wav")
        _ = try ffmpeg([
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=\(seconds)",
            "-f", "lavfi", "-i", "sine=frequency=660:sample_rate=44100:duration=\(seconds)",
            "-filter_complex", "[0][1]join=inputs=2:channel_layout=stereo", "-c:a", "pcm_s16le", url.path,
        ])
        return url
    }

    private func samples(_ data: Data) -> [Int16] {
        data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    func testTheHelperDecodesWhatFFmpegDecodesAndSeeksToTheSample() throws {
        let file = try wave(seconds: 3)
        let expected = samples(try ffmpeg(["-i", file.path, "-f", "s16le", "-ac", "2", "-ar", "44100", "-"]))
        XCTAssertEqual(expected.count, 3 * 44_100 * 2)

        let source = try PCMDecoderProcess.open(file.path)
        XCTAssertEqual(try XCTUnwrap(source.duration), 3, accuracy: 0.01)
        var decoded: [Int16] = []
        while true {
            let block = try source.read(frames: 352)  // one RTP packet's worth, as the speaker stream asks
            if block.isEmpty { break }
            XCTAssertLessThanOrEqual(block.count, 352 * 2)
            decoded += block
        }
        XCTAssertEqual(decoded.count, expected.count)
        XCTAssertTrue(decoded == expected, "the helper's samples differ from ffmpeg's")
        XCTAssertEqual(try source.read(frames: 352), [], "after the end, nothing")

        try source.seek(to: 1)
        XCTAssertEqual(try source.read(frames: 1000), Array(expected[(44_100 * 2)..<(44_100 * 2 + 2000)]))
        try source.seek(to: 0)
        XCTAssertEqual(try source.read(frames: 10), Array(expected[0..<20]))
    }

    func testAFileWithoutAudioOrNoFileIsAPlaybackErrorSayingWhy() throws {
        let text = folder.appendingPathComponent("notes.txt")
        try Data(repeating: 0x41, count: 10_000).write(to: text)
        for path in [text.path, folder.appendingPathComponent("missing.flac").path] {
            XCTAssertThrowsError(try PCMDecoderProcess.open(path)) { error in
                let failure = error as? CastError
                XCTAssertEqual(failure?.kind, .playback, "\(error)")
                XCTAssertFalse(failure?.message.isEmpty ?? true)
            }
        }
    }

    func testTheHelperEndsWithItsSource() throws {
        var source: PCMDecoderProcess? = try PCMDecoderProcess.open(try wave(seconds: 1).path)
        let pid = try XCTUnwrap(source?.helperPID)
        XCTAssertEqual(kill(pid, 0), 0, "the helper runs while its source lives")
        source = nil
        XCTAssertEqual(kill(pid, 0), -1, "the helper is gone (and reaped) with its source")
        XCTAssertEqual(errno, ESRCH)
    }
}
