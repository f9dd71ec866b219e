import CastKit
import CastMedia
import CastProtocol
import CastTestSupport
import Foundation
import Synchronization
import XCTest

/// The movie player's timed metadata, access and error logs, and thumbnails (local playback, ALSA `null`).
final class MoviePlayerMediaTests: LocalPlaybackTestCase {
    /// A tagged clip: its title and artist arrive as timed metadata (with the notification), and the access log
    /// has an entry for the playback with the file's bytes and the time watched.
    func testMetadataAndAccessLog() throws {
        let clip = folder.appendingPathComponent("tagged.mp4")
        let made = Process()
        made.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        made.arguments = [
            "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=1", "-f",
            "lavfi",
            "-i", "sine=duration=1", "-c:v", "libx264", "-c:a", "aac", "-shortest", "-metadata", "title=Sunrise",
            "-metadata", "artist=The Testers", clip.path,
        ]
        try made.run()
        made.waitUntilExit()
        let player = MoviePlayerController(contentURL: clip, outputs: MovieFixtures.outputs())
        XCTAssertNil(player.timedMetadata)
        XCTAssertEqual(player.accessLog, [])
        XCTAssertEqual(player.errorLog, [])
        let updates = Mutex(0)
        let token = NotificationCenter.default.addObserver(
            forName: .moviePlayerTimedMetadataUpdated, object: player, queue: nil
        ) { _ in updates.withLock { $0 += 1 } }
        defer { NotificationCenter.default.removeObserver(token) }
        let log = MoviePlayerLog(player)
        player.play()
        XCTAssertTrue(waitUntil(timeout: 10) { log.finishReason != nil })
        XCTAssertEqual(player.timedMetadata?.items["title"], "Sunrise")
        XCTAssertEqual(player.timedMetadata?.items["artist"], "The Testers")
        XCTAssertTrue(waitUntil(timeout: 2) { updates.withLock { $0 } >= 1 })
        let entry = try XCTUnwrap(player.accessLog.last, "no access log entry")
        XCTAssertEqual(player.accessLog.count, 1)
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: clip.path)[.size] as? Int)
        XCTAssertEqual(entry.bytesTransferred, Int64(size))
        XCTAssertEqual(entry.durationWatched, 1, accuracy: 0.15)
        XCTAssertEqual(entry.stalls, 0)
    }

    /// The sync thumbnail is the frame ffmpeg decodes at that time; a batch posts one result per time, in order; a
    /// cancel answers what is pending as cancelled.
    func testThumbnails() throws {
        let clip = try MovieFixtures.clip(seconds: 4, in: folder)
        let player = MoviePlayerController(contentURL: clip, outputs: MovieFixtures.outputs())
        // On a frame boundary (38 / 25 s), where ffmpeg's -ss and the frame on screen agree; not a key frame.
        let image = try player.thumbnailImage(at: 1.52, timeOption: .exact)
        XCTAssertEqual(Array(image.png.prefix(4)), [0x89, 0x50, 0x4E, 0x47])
        XCTAssertEqual(image.width, 320)
        XCTAssertEqual(image.height, 240)
        XCTAssertEqual(image.time, 1.52, accuracy: 0.001)
        let key = try player.thumbnailImage(at: 1.5, timeOption: .nearestKeyFrame)
        XCTAssertEqual(key.time, 1, accuracy: 0.01, "key frames every second")
        // The exact image is ffmpeg's own frame at that time.
        let reference = folder.appendingPathComponent("reference.rgb")
        let ours = folder.appendingPathComponent("ours.png")
        try Data(image.png).write(to: ours)
        for (input, output, seek) in [
            (clip.path, reference.path, ["-ss", "1.52"]),
            (ours.path, folder.appendingPathComponent("ours.rgb").path, []),
        ] {
            let convert = Process()
            convert.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            convert.arguments =
                ["ffmpeg", "-v", "error", "-y"] + seek + [
                    "-i", input, "-frames:v", "1", "-pix_fmt", "rgb24", "-f", "rawvideo", output,
                ]
            try convert.run()
            convert.waitUntilExit()
        }
        XCTAssertEqual(
            try Data(contentsOf: reference), try Data(contentsOf: folder.appendingPathComponent("ours.rgb")),
            "the exact thumbnail is ffmpeg's frame at 1.52 s")

        let results = Mutex<[(time: TimeInterval, ok: Bool)]>([])
        let token = NotificationCenter.default.addObserver(
            forName: .moviePlayerThumbnailImageRequestDidFinish, object: player, queue: nil
        ) { note in
            let time = note.userInfo?[MoviePlayerController.thumbnailTimeUserInfoKey] as? TimeInterval ?? -1
            let ok = note.userInfo?[MoviePlayerController.thumbnailImageUserInfoKey] is Thumbnail
            results.withLock { $0.append((time, ok)) }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        // The time key is the frame's actual time (the key frame before each time asked for), as the seeds say.
        player.requestThumbnailImages(atTimes: [0.4, 1.5, 2.9], timeOption: .nearestKeyFrame)
        XCTAssertTrue(waitUntil(timeout: 10) { results.withLock { $0.count } == 3 })
        XCTAssertEqual(results.withLock { $0.map(\.time) }, [0, 1, 2])
        XCTAssertTrue(results.withLock { $0.allSatisfy(\.ok) })

        results.withLock { $0 = [] }
        player.requestThumbnailImages(atTimes: Array(repeating: 3.9, count: 30), timeOption: .exact)
        player.cancelAllThumbnailImageRequests()
        XCTAssertTrue(
            waitUntil(timeout: 20) { results.withLock { $0.count } == 30 }, "every request is answered")
        XCTAssertTrue(results.withLock { $0.contains { !$0.ok } }, "pending requests were cancelled")

        let none = MoviePlayerController(contentURL: nil, outputs: MovieFixtures.outputs())
        XCTAssertThrowsError(try none.thumbnailImage(at: 0, timeOption: .exact)) { error in
            XCTAssertEqual((error as? CastError)?.kind, .usage, "\(error)")
        }
        // A time that cannot be decoded says why rather than returning nothing.
        XCTAssertThrowsError(try player.thumbnailImage(at: .nan, timeOption: .exact)) { error in
            XCTAssertTrue("\(error)".contains("not a number of seconds"), "\(error)")
        }
    }
}
