import CastMedia
import Foundation
import XCTest

final class PCMReaderTests: XCTestCase {
    /// A 48 kHz mono WAV comes out as 44.1 kHz stereo: every frame of it, at its frequency.
    func testResamplesToTheAskedRateAndChannelsWithoutLosingFrames() throws {
        let folder = try Fixtures.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("tone.wav").path
        try Fixtures.run(
            "ffmpeg",
            ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000:duration=2", path])
        let reader = try PCMReader(path: path, sampleRate: 44_100, channels: 2)
        XCTAssertEqual(try XCTUnwrap(reader.duration), 2, accuracy: 0.01)
        var samples: [Int16] = []
        while true {
            let piece = try reader.read(frames: 352)
            if piece.isEmpty { break }
            XCTAssertEqual(piece.count % 2, 0)
            samples += piece
        }
        let frames = samples.count / 2
        XCTAssertEqual(Double(frames), 88_200, accuracy: 64, "frames out: \(frames)")
        let left = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
        let right = stride(from: 1, to: samples.count, by: 2).map { samples[$0] }
        XCTAssertEqual(left, right, "mono is copied to both channels")
        var crossings = 0
        for i in 1..<left.count where (left[i - 1] < 0) != (left[i] < 0) { crossings += 1 }
        XCTAssertEqual(Double(crossings) / 2 / (Double(frames) / 44_100), 1000, accuracy: 3)
        XCTAssertEqual(try reader.read(frames: 352), [], "the end stays the end")
    }

    /// A video file gives its audio.
    func testAVideoFileGivesItsAudioAndAFileWithoutAudioIsRefused() throws {
        let folder = try Fixtures.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let reader = try PCMReader(path: try Fixtures.h264AAC(in: folder))
        let first = try reader.read(frames: 44_100)
        XCTAssertEqual(first.count, 88_200)
        XCTAssertGreaterThan(first.map { abs(Int($0)) }.max() ?? 0, 1000)
        XCTAssertThrowsError(try PCMReader(path: try Fixtures.videoOnly(in: folder)))
    }

    /// A 5.1 file with its sound on the centre comes out as ffmpeg's stereo downmix (a speaker gets the dialogue).
    func testSurroundIsDownmixedWithItsCentre() throws {
        let folder = try Fixtures.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("centre.ac3").path
        try Fixtures.run(
            "ffmpeg",
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "aevalsrc=0|0|0.4*sin(2*PI*440*t)|0|0|0:c=5.1:s=48000:d=1",
                path,
            ])
        let reader = try PCMReader(path: path)
        var samples: [Int16] = []
        while true {
            let piece = try reader.read(frames: 4096)
            if piece.isEmpty { break }
            samples += piece
        }
        let played = Capture(Data(bytes: samples, count: samples.count * 2), channels: 2)
        let reference = Capture(
            try Fixtures.run("ffmpeg", ["-v", "error", "-i", path, "-ac", "2", "-ar", "44100", "-f", "s16le", "-"]),
            channels: 2)
        XCTAssertEqual(played.decibels(channel: 0, relativeTo: reference), 0, accuracy: 0.5, played.summary)
        XCTAssertEqual(played.decibels(channel: 1, relativeTo: reference), 0, accuracy: 0.5, played.summary)
    }

    /// An audio stream none of whose packets decode is an error naming it, not a speaker that plays silence.
    func testAStreamThatNeverDecodesIsAnErrorNamingIt() throws {
        let folder = try Fixtures.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let good = folder.appendingPathComponent("good.mkv").path
        try Fixtures.run("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=duration=1", "-c:a", "ac3", good])
        let bad = folder.appendingPathComponent("bad.mkv").path
        try Fixtures.run("ffmpeg", ["-v", "error", "-y", "-i", good, "-c", "copy", "-bsf:a", "noise=amount=1", bad])
        let reader = try PCMReader(path: bad)
        XCTAssertThrowsError(
            try {
                while try !reader.read(frames: 4096).isEmpty {}
            }()
        ) { error in
            XCTAssertTrue("\(error)".hasPrefix("audio stream #0 (ac3"), "\(error)")
        }
    }

    /// A seek is exact: the frames after it are those at the position asked for (as ffmpeg decodes the file), not
    /// those from the start of the FLAC frame (4096 samples) the demuxer lands on. The file is a ramp: no two samples
    /// of a frame's length alike.
    func testASeekLandsOnTheExactFrame() throws {
        let folder = try Fixtures.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("ramp.flac").path
        let ramp = "aevalsrc=exprs=mod(n\\,32768)/32768:s=44100:d=4"
        try Fixtures.run("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", ramp, "-c:a", "flac", path])
        let decoded = try Fixtures.run("ffmpeg", ["-v", "error", "-i", path, "-ac", "2", "-f", "s16le", "-"])
        let reference = decoded.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)).map { Int16(littleEndian: $0) } }
        let reader = try PCMReader(path: path, sampleRate: 44_100, channels: 2)
        for seconds in [1.5, 0.25, 3.0] {
            try reader.seek(to: seconds)
            let frame = Int((seconds * 44_100).rounded())
            let expected = Array(reference[(frame * 2)..<(frame * 2 + 128)])
            XCTAssertEqual(try reader.read(frames: 64), expected, "after a seek to \(seconds) s")
        }
    }
}
