import CastMedia
import CastProtocol
import Foundation
import XCTest

final class PlayerTests: XCTestCase {
    func testH264AACPlaysInRealTimeWithExactFramesAndAudio() throws {
        let folder = try Fixtures.folder()
        let clip = try Fixtures.h264AAC(in: folder)
        let md5 = folder.appendingPathComponent("out.framemd5").path
        let raw = folder.appendingPathComponent("out.raw").path
        let (log, seconds) = try play(
            try FileSource(path: clip), audio: .alsa(device: Fixtures.captureDevice(raw)), video: .framemd5(path: md5))
        XCTAssertEqual(log.finish?.reason, .playbackEnded, "\(log.events)")
        XCTAssertEqual(
            Fixtures.comparable(try String(contentsOfFile: md5, encoding: .utf8)),
            Fixtures.comparable(try Fixtures.ffmpegFrameMD5(clip)))
        print("wall time \(seconds) s")
        XCTAssertEqual(seconds, 2.0, accuracy: 0.3)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: raw))
        print("audio bytes \(bytes.count)")
        let expected: Double = 2 * 48_000 * 4
        XCTAssertEqual(Double(bytes.count), expected, accuracy: expected * 0.02)
        XCTAssertEqual(Self.toneFrequency(bytes), 440, accuracy: 440 * 0.02)
        Self.assertEventOrder(log, video: true)
    }

    func testVideoOnlyPlaysToTheEndWithExactFrames() throws {
        let folder = try Fixtures.folder()
        let clip = try Fixtures.videoOnly(in: folder)
        let md5 = folder.appendingPathComponent("out.framemd5").path
        let (log, seconds) = try play(
            try FileSource(path: clip), audio: .alsa(device: "null"), video: .framemd5(path: md5))
        XCTAssertEqual(log.finish?.reason, .playbackEnded, "\(log.events)")
        XCTAssertEqual(
            Fixtures.comparable(try String(contentsOfFile: md5, encoding: .utf8)),
            Fixtures.comparable(try Fixtures.ffmpegFrameMD5(clip)))
        XCTAssertEqual(seconds, 2.0, accuracy: 0.3)
        XCTAssertTrue(log.events.contains(.mediaTypes([.video])))
        Self.assertEventOrder(log, video: true)
    }

    func testAudioOnlyPlaysToTheEnd() throws {
        let folder = try Fixtures.folder()
        let clip = try Fixtures.audioOnly(in: folder)
        let raw = folder.appendingPathComponent("out.raw").path
        let (log, seconds) = try play(try FileSource(path: clip), audio: .alsa(device: Fixtures.captureDevice(raw)))
        XCTAssertEqual(log.finish?.reason, .playbackEnded, "\(log.events)")
        XCTAssertEqual(seconds, 2.0, accuracy: 0.3)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: raw))
        let expected: Double = 2 * 48_000 * 4
        XCTAssertEqual(Double(bytes.count), expected, accuracy: expected * 0.02)
        XCTAssertEqual(Self.toneFrequency(bytes), 440, accuracy: 440 * 0.02)
        XCTAssertTrue(log.events.contains(.mediaTypes([.audio])))
        Self.assertEventOrder(log, video: false)
    }

    func testNonSeekableSourcePlays() throws {
        let folder = try Fixtures.folder()
        let clip = try Fixtures.h264AAC(in: folder, name: "clip.ts", extra: ["-f", "mpegts"])
        let md5 = folder.appendingPathComponent("out.framemd5").path
        let source = StreamSource(try Data(contentsOf: URL(fileURLWithPath: clip)))
        let (log, seconds) = try play(source, audio: .alsa(device: "null"), video: .framemd5(path: md5))
        XCTAssertEqual(log.finish?.reason, .playbackEnded, "\(log.events)")
        XCTAssertEqual(seconds, 2.0, accuracy: 0.3)
        XCTAssertEqual(
            Fixtures.comparable(try String(contentsOfFile: md5, encoding: .utf8)),
            Fixtures.comparable(try Fixtures.ffmpegFrameMD5(clip)))
        // A stream read from memory arrives far faster than it plays: playthrough is OK by the measured rate, even
        // though its size is unknown and it cannot seek (it was refused before the buffering rule).
        XCTAssertTrue(log.events.contains(.loadState([.playable, .playthroughOK])), "\(log.events)")
    }

    func testTextFileFailsWithFFmpegsMessage() throws {
        let folder = try Fixtures.folder()
        // Not .txt: FFmpeg opens a .txt file as ANSI art (the tty demuxer) and plays it, as `ffmpeg -i` does.
        let path = folder.appendingPathComponent("notes.md").path
        try Data(String(repeating: "this is not a movie\n", count: 100).utf8).write(to: URL(fileURLWithPath: path))
        let (log, _) = try play(try FileSource(path: path))
        XCTAssertEqual(log.finish?.reason, .playbackError)
        let message = log.finish?.error ?? ""
        print("text file: \(message)")
        XCTAssertTrue(message.contains("Invalid data found when processing input"), message)
        XCTAssertEqual(log.events.suffix(2).first, .playbackState(.stopped))
    }

    func testTruncatedFileEndsWithoutCrashOrHang() throws {
        let folder = try Fixtures.folder()
        let clip = try Fixtures.h264AAC(in: folder)
        let data = try Data(contentsOf: URL(fileURLWithPath: clip))
        let cut = folder.appendingPathComponent("cut.mp4").path
        try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: cut))
        let (log, _) = try play(try FileSource(path: cut), audio: .alsa(device: "null"))
        print("truncated: \(String(describing: log.finish))")
        XCTAssertTrue([.playbackEnded, .playbackError].contains(log.finish?.reason))
    }

    func testTruncatedStreamableFileEndsWithoutCrashOrHang() throws {
        let folder = try Fixtures.folder()
        let clip = try Fixtures.h264AAC(in: folder, extra: ["-movflags", "+faststart"])
        let data = try Data(contentsOf: URL(fileURLWithPath: clip))
        let cut = folder.appendingPathComponent("cut.mp4").path
        try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: cut))
        let (log, seconds) = try play(try FileSource(path: cut), audio: .alsa(device: "null"))
        print("truncated faststart: \(String(describing: log.finish)) after \(seconds) s")
        XCTAssertTrue([.playbackEnded, .playbackError].contains(log.finish?.reason))
    }

    func testStopEndsPlaybackPromptly() throws {
        let folder = try Fixtures.folder()
        let clip = try Fixtures.h264AAC(in: folder)
        let log = EventLog()
        let player = Player(
            source: try FileSource(path: clip),
            configuration: PlayerConfiguration(audio: .alsa(device: "null"), video: .none)
        ) { log.append($0) }
        player.start()
        Thread.sleep(forTimeInterval: 0.7)
        let took = stopAndWait(player)
        print("stop took \(took) s")
        XCTAssertLessThan(took, 1)
        XCTAssertEqual(log.finish?.reason, .userExited)
        player.stop()
    }

    func testPauseHoldsAndResumeContinues() throws {
        let folder = try Fixtures.folder()
        let clip = try Fixtures.h264AAC(in: folder)
        let md5 = folder.appendingPathComponent("out.framemd5").path
        let log = EventLog()
        let player = Player(
            source: try FileSource(path: clip),
            configuration: PlayerConfiguration(audio: .alsa(device: "null"), video: .framemd5(path: md5))
        ) { log.append($0) }
        let started = Date()
        player.start()
        Thread.sleep(forTimeInterval: 0.8)
        player.pause()
        Thread.sleep(forTimeInterval: 0.1)
        let linesAtPause = try String(contentsOfFile: md5, encoding: .utf8).split(separator: "\n").count
        Thread.sleep(forTimeInterval: 0.6)
        let linesLater = try String(contentsOfFile: md5, encoding: .utf8).split(separator: "\n").count
        XCTAssertEqual(linesAtPause, linesLater, "frames were presented while paused")
        player.resume()
        player.waitUntilFinished()
        let seconds = Date().timeIntervalSince(started)
        XCTAssertEqual(seconds, 2.7, accuracy: 0.35)
        XCTAssertEqual(log.finish?.reason, .playbackEnded)
        XCTAssertEqual(
            Fixtures.comparable(try String(contentsOfFile: md5, encoding: .utf8)),
            Fixtures.comparable(try Fixtures.ffmpegFrameMD5(clip)))
        let states = log.events.compactMap { event -> PlaybackState? in
            if case .playbackState(let state) = event { return state }
            return nil
        }
        XCTAssertEqual(states, [.playing, .paused, .playing, .stopped])
    }

    // MARK: Helpers

    /// The frequency of channel 0 of interleaved S16LE stereo, from its rising zero crossings.
    static func toneFrequency(_ bytes: Data) -> Double {
        let samples = bytes.withUnsafeBytes { raw in
            stride(from: 0, to: raw.count - 3, by: 4).map {
                Int16(littleEndian: raw.loadUnaligned(fromByteOffset: $0, as: Int16.self))
            }
        }
        var crossings = 0
        for i in 1..<samples.count where samples[i - 1] < 0 && samples[i] >= 0 { crossings += 1 }
        return Double(crossings) / (Double(samples.count) / 48_000)
    }

    /// loadState … mediaTypes … (readyForDisplay) … playing … positions (≥ 4/s) … stopped, finished.
    static func assertEventOrder(_ log: EventLog, video: Bool, file: StaticString = #filePath, line: UInt = #line) {
        let events = log.events
        func index(_ event: PlaybackEvent) -> Int? { events.firstIndex(of: event) }
        guard let playable = index(.loadState([.playable])), let playing = index(.playbackState(.playing)),
            let stopped = index(.playbackState(.stopped)),
            let types = events.firstIndex(where: {
                if case .mediaTypes = $0 { return true } else { return false }
            })
        else { return XCTFail("missing events: \(events)", file: file, line: line) }
        XCTAssertEqual(playable, 0, file: file, line: line)
        XCTAssertLessThan(types, playing, file: file, line: line)
        XCTAssertLessThan(playing, stopped, file: file, line: line)
        XCTAssertEqual(stopped, events.count - 2, file: file, line: line)
        if video {
            guard let ready = index(.readyForDisplay), let active = index(.videoActive(true)),
                let inactive = index(.videoActive(false))
            else { return XCTFail("missing video events: \(events)", file: file, line: line) }
            XCTAssertLessThan(ready, playing, file: file, line: line)
            XCTAssertLessThan(playing, active, file: file, line: line)
            XCTAssertLessThan(inactive, stopped, file: file, line: line)
        }
        let positions = log.timed.compactMap { entry -> (Double, Date)? in
            if case .position(let seconds, _) = entry.event { return (seconds, entry.time) }
            return nil
        }
        guard let first = positions.first, let last = positions.last, positions.count > 1 else {
            return XCTFail("too few positions: \(events)", file: file, line: line)
        }
        let rate = Double(positions.count - 1) / last.1.timeIntervalSince(first.1)
        XCTAssertGreaterThanOrEqual(rate, 4, file: file, line: line)
        XCTAssertEqual(zip(positions, positions.dropFirst()).allSatisfy { $0.0 <= $1.0 }, true, file: file, line: line)
    }
}

/// The bytes of a file as a non-seekable stream, like standard input.
final class StreamSource: MediaSource, @unchecked Sendable {
    // Invariant: `offset` is only touched by the engine's demux thread, one call at a time.
    private let data: Data
    private var offset = 0

    init(_ data: Data) { self.data = data }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = min(buffer.count, data.count - offset)
        guard n > 0 else { return 0 }
        data.copyBytes(to: buffer.bindMemory(to: UInt8.self), from: offset..<offset + n)
        offset += n
        return n
    }

    func seek(to offset: Int64) throws { preconditionFailure("seek on a non-seekable source") }
    var size: Int64? { nil }
    var isSeekable: Bool { false }
    var nameHint: String? { nil }
}
