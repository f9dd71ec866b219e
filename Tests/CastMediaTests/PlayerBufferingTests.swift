import CastMedia
import CastProtocol
import Foundation
import XCTest

/// The engine over an input slower than the media: stalls, their events, the hold of the clock, and the logs.
final class PlayerBufferingTests: XCTestCase {
    /// A 2 s tagged clip with its index first, and a source that delivers it at half its byte rate; with `fastFirst`,
    /// that fraction of it first at four times its byte rate (the link slows down while the clip plays).
    private func slowClip(_ folder: URL, fastFirst: Double = 0) throws -> (
        path: String, size: Int, source: ReadAheadSource
    ) {
        let path = try Fixtures.h264AAC(
            in: folder, name: "tagged.mp4",
            extra: ["-movflags", "+faststart", "-metadata", "title=Engine Test", "-metadata", "artist=Tester"])
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let byteRate = Double(data.count) / 2
        let throttled = ThrottledSource(
            data, bytesPerSecond: byteRate / 2, fast: (Int(Double(data.count) * fastFirst), byteRate * 4))
        return (path, data.count, ReadAheadSource(throttled, capacity: 1 << 20, chunk: 8 << 10, backBuffer: 64 << 10))
    }

    private func waitFor(_ log: EventLog, timeout: Double = 10, _ matches: (PlaybackEvent) -> Bool) -> Int? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let index = log.events.firstIndex(where: matches) { return index }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return nil
    }

    /// Half the clip's rate from the start: playthrough is judged not OK, so playback waits before it starts (stalled,
    /// with the expected wait), then plays to the end without a stall.
    func testOnAnInputSlowerThanTheFilmItWaitsBeforeItStartsThenNeverStalls() throws {
        let folder = try Fixtures.folder()
        let (clip, _, source) = try slowClip(folder)
        let md5 = folder.appendingPathComponent("out.framemd5").path
        let (log, seconds) = try play(source, audio: .alsa(device: "null"), video: .framemd5(path: md5), timeout: 30)
        XCTAssertEqual(log.finish?.reason, .playbackEnded, "\(log.events)")
        let events = log.events
        let playing = try XCTUnwrap(events.firstIndex(of: .playbackState(.playing)), "\(events)")
        let before = events[..<playing]
        let stalled = try XCTUnwrap(before.firstIndex(of: .loadState(.stalled)), "no wait at the start: \(events)")
        XCTAssertEqual(events[stalled + 1], .playbackState(.interrupted))
        XCTAssertTrue(
            before.contains { if case .buffered(_, _, _, let wait?) = $0 { wait > 0 } else { false } }, "\(before)")
        XCTAssertTrue(
            before.contains { if case .loadState(let l) = $0 { l.contains(.playthroughOK) } else { false } },
            "\(before)")
        XCTAssertFalse(events[playing...].contains(.playbackState(.interrupted)), "a stall after the start: \(events)")
        XCTAssertFalse(events[playing...].contains(.loadState(.stalled)), "\(events)")
        XCTAssertEqual(
            Fixtures.comparable(try String(contentsOfFile: md5, encoding: .utf8)),
            Fixtures.comparable(try Fixtures.ffmpegFrameMD5(clip)))
        let access = try XCTUnwrap(
            events.compactMap { event -> AccessLogEntry? in if case .accessLog(let l) = event { l } else { nil } }.last)
        // The wait at the start is no stall; the clip arrives in 4 s.
        XCTAssertEqual(access.stalls, 0)
        XCTAssertEqual(access.durationWatched, 2, accuracy: 0.2)
        XCTAssertGreaterThan(seconds, 3.5)
        print("slow source from the start: \(String(format: "%.2f", seconds)) s wall, no stall after the start")
    }

    /// Fast at first (playthrough OK, playback starts at once), then at half the clip's rate: a stall, reported and
    /// logged, that ends by itself.
    func testSlowInputStallsAndResumesWithEveryFrameAndLogsIt() throws {
        let folder = try Fixtures.folder()
        let (clip, size, source) = try slowClip(folder, fastFirst: 0.4)
        let md5 = folder.appendingPathComponent("out.framemd5").path
        let (log, seconds) = try play(source, audio: .alsa(device: "null"), video: .framemd5(path: md5), timeout: 30)
        XCTAssertEqual(log.finish?.reason, .playbackEnded, "\(log.events)")
        let events = log.events
        let stalled = try XCTUnwrap(events.firstIndex(of: .loadState(.stalled)), "\(events)")
        let interrupted = try XCTUnwrap(events[stalled...].firstIndex(of: .playbackState(.interrupted)))
        XCTAssertEqual(interrupted, stalled + 1)
        let resumed = try XCTUnwrap(events[interrupted...].firstIndex(of: .playbackState(.playing)), "\(events)")
        XCTAssertTrue(
            events[interrupted..<resumed].contains {
                if case .loadState(let load) = $0 { !load.contains(.stalled) } else { false }
            })
        XCTAssertEqual(
            Fixtures.comparable(try String(contentsOfFile: md5, encoding: .utf8)),
            Fixtures.comparable(try Fixtures.ffmpegFrameMD5(clip)))
        XCTAssertEqual(events.suffix(2).first, .playbackState(.stopped))

        let metadata = events.compactMap { event -> TimedMetadata? in
            if case .metadata(let m) = event { m } else { nil }
        }
        XCTAssertEqual(metadata.first?.items["title"], "Engine Test", "\(events)")
        XCTAssertEqual(metadata.first?.items["artist"], "Tester")
        XCTAssertEqual(metadata.first?.artwork, false)
        let access = try XCTUnwrap(
            events.compactMap { event -> AccessLogEntry? in if case .accessLog(let l) = event { l } else { nil } }.last)
        XCTAssertGreaterThan(access.stalls, 0)
        XCTAssertGreaterThan(access.stallDuration, 0.1)
        XCTAssertEqual(access.bytesTransferred, Int64(size))
        // Stalls do not count as watched: the 2 s of media, though it took longer.
        XCTAssertEqual(access.durationWatched, 2, accuracy: 0.2)
        XCTAssertGreaterThan(seconds, 2.5)
        XCTAssertNotNil(access.startupTime)
        XCTAssertTrue(events.contains { if case .buffered = $0 { true } else { false } })
        print(
            "slow source: \(access.stalls) stalls, \(String(format: "%.2f", access.stallDuration)) s stalled, "
                + "\(String(format: "%.2f", seconds)) s wall, watched \(String(format: "%.2f", access.durationWatched)) s"
        )
    }

    func testAPauseDuringAStallStaysPaused() throws {
        let folder = try Fixtures.folder()
        let (_, _, source) = try slowClip(folder)
        let log = EventLog()
        let player = Player(source: source, configuration: PlayerConfiguration(audio: .none, video: .none)) {
            log.append($0)
        }
        player.start()
        defer { player.stop() }
        XCTAssertNotNil(waitFor(log) { $0 == .playbackState(.interrupted) }, "\(log.events)")
        player.pause()
        let paused = try XCTUnwrap(waitFor(log) { $0 == .playbackState(.paused) })
        // The buffer refills (the load state leaves stalled) and playback stays paused.
        let refilled = waitFor(log) {
            if case .loadState(let load) = $0 { !load.contains(.stalled) && load.contains(.playable) } else { false }
        }
        XCTAssertNotNil(refilled, "\(log.events)")
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertFalse(log.events[paused...].contains(.playbackState(.playing)), "\(log.events)")
        player.resume()
        player.waitUntilFinished()
        XCTAssertEqual(log.finish?.reason, .playbackEnded, "\(log.events)")
        XCTAssertTrue(log.events[paused...].contains(.playbackState(.playing)))
    }

    func testWithoutAutoplayItLoadsAndWaitsPaused() throws {
        let folder = try Fixtures.folder()
        let clip = try Fixtures.h264AAC(in: folder)
        let log = EventLog()
        let player = Player(
            source: try FileSource(path: clip),
            configuration: PlayerConfiguration(audio: .none, video: .none, autoplay: false)
        ) { log.append($0) }
        player.start()
        defer { player.stop() }
        XCTAssertNotNil(waitFor(log) { $0 == .playbackState(.paused) }, "\(log.events)")
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertFalse(log.events.contains(.playbackState(.playing)), "\(log.events)")
        XCTAssertTrue(log.events.contains(.readyForDisplay))
        player.resume()
        player.waitUntilFinished()
        XCTAssertEqual(log.finish?.reason, .playbackEnded, "\(log.events)")
        let access = try XCTUnwrap(
            log.events.compactMap { event -> AccessLogEntry? in if case .accessLog(let l) = event { l } else { nil } }
                .last)
        XCTAssertEqual(access.durationWatched, 2, accuracy: 0.2)
        XCTAssertEqual(access.stalls, 0)
    }
}

/// Bytes from memory at a fixed rate (a slow network, without a network): each read returns at most 8 KiB and
/// sleeps for the time those bytes take at `bytesPerSecond`; the first `fast.bytes` bytes at `fast.rate`.
final class ThrottledSource: MediaSource, @unchecked Sendable {
    // Invariant: `offset` is only touched by the read-ahead thread, one call at a time.
    private let data: Data
    private let bytesPerSecond: Double
    private let fast: (bytes: Int, rate: Double)
    private var offset = 0

    init(_ data: Data, bytesPerSecond: Double, fast: (bytes: Int, rate: Double) = (0, 1)) {
        self.data = data
        self.bytesPerSecond = bytesPerSecond
        self.fast = fast
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let n = min(buffer.count, data.count - offset, 8 << 10)
        guard n > 0 else { return 0 }
        Thread.sleep(forTimeInterval: Double(n) / (offset < fast.bytes ? fast.rate : bytesPerSecond))
        data.copyBytes(to: buffer.bindMemory(to: UInt8.self), from: offset..<offset + n)
        offset += n
        return n
    }

    func seek(to offset: Int64) throws { self.offset = Int(offset) }
    var size: Int64? { Int64(data.count) }
    var isSeekable: Bool { true }
    var nameHint: String? { "tagged.mp4" }
}
