import Foundation
import XCTest

@testable import CastMedia

/// Thumbnails: the PNG decodes (ffmpeg reads it back) to exactly the pixels ffmpeg makes of its own frame at the time,
/// key-frame mode lands on the preceding key frame, sizes are bounded, and a cancel-all stops what is pending.
final class ThumbnailerTests: XCTestCase {
    /// testsrc2 320×240 at 25 fps for 4 s with B-frames and a key frame every second (0, 1, 2, 3 s).
    private func clip() throws -> String {
        let path = try Fixtures.folder().appendingPathComponent("thumbnail-source.mp4").path
        if !FileManager.default.fileExists(atPath: path) {
            try Fixtures.run(
                "ffmpeg",
                [
                    "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=4", "-c:v",
                    "libx264",
                    "-pix_fmt", "yuv420p", "-g", "25", "-bf", "2", path,
                ])
        }
        return path
    }

    /// The PNG's pixels as ffmpeg decodes them, in `format`.
    private func pixels(ofPNG png: [UInt8], format: String = "rgb24") throws -> Data {
        let path = try Fixtures.folder().appendingPathComponent("thumbnail-\(UUID().uuidString).png").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(png).write(to: URL(fileURLWithPath: path))
        return try Fixtures.run("ffmpeg", ["-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", format, "-"])
    }

    /// ffmpeg's own frame at `seconds` (`-ss` before the input: decoded from the key frame before it), as RGB24.
    private func ffmpegFrame(_ clip: String, at seconds: Double, width: Int? = nil) throws -> Data {
        var arguments = ["-v", "error", "-ss", String(seconds), "-i", clip, "-frames:v", "1"]
        if let width { arguments += ["-vf", "scale=\(width):-1"] }
        return try Fixtures.run("ffmpeg", arguments + ["-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
    }

    func testExactImagesAreFFmpegsFramesPixelForPixel() throws {
        let clip = try clip()
        let thumbnailer = Thumbnailer(source: try FileSource(path: clip))
        defer { thumbnailer.close() }
        // On frame boundaries (k / 25 s) ffmpeg's `-ss` and the frame on screen agree; 1.52 and 3.36 are not key frames.
        for seconds in [0.0, 1.52, 2.0, 3.36, 0.44] {
            let image = try thumbnailer.image(at: seconds, option: .exact)
            XCTAssertEqual(Array(image.png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "a PNG")
            XCTAssertEqual(image.width, 320)
            XCTAssertEqual(image.height, 240)
            XCTAssertEqual(image.time, seconds, accuracy: 0.001)
            let decoded = try pixels(ofPNG: image.png)
            let reference = try ffmpegFrame(clip, at: seconds)
            XCTAssertEqual(decoded.count, 320 * 240 * 3)
            XCTAssertTrue(decoded == reference, "the image at \(seconds) s differs from ffmpeg's frame")
        }
        // Between frames, the frame on screen at that time: 2.5 s lies in the frame shown from 2.48 s.
        let between = try thumbnailer.image(at: 2.5, option: .exact)
        XCTAssertEqual(between.time, 2.48, accuracy: 0.001)
        XCTAssertTrue(try pixels(ofPNG: between.png) == ffmpegFrame(clip, at: 2.48))
    }

    /// A phone video's image stands upright (portrait), pixel for pixel ffmpeg's autorotated frame.
    func testAPhoneVideosImageIsUprightAsFFmpegTurnsIt() throws {
        let turned = try Fixtures.folder().appendingPathComponent("thumbnail-rotated.mp4").path
        try Fixtures.run(
            "ffmpeg", ["-v", "error", "-y", "-i", try clip(), "-c", "copy", "-metadata:s:v:0", "rotate=90", turned])
        let thumbnailer = Thumbnailer(source: try FileSource(path: turned))
        defer { thumbnailer.close() }
        let image = try thumbnailer.image(at: 1.52, option: .exact)
        XCTAssertEqual([image.width, image.height], [240, 320])
        XCTAssertTrue(try pixels(ofPNG: image.png) == ffmpegFrame(turned, at: 1.52), "differs from ffmpeg's frame")
    }

    func testKeyFrameImagesLandOnThePrecedingKeyFrame() throws {
        let clip = try clip()
        let thumbnailer = Thumbnailer(source: try FileSource(path: clip))
        defer { thumbnailer.close() }
        for (seconds, keyFrame) in [(2.6, 2.0), (1.0, 1.0), (3.96, 3.0), (0.3, 0.0)] {
            let image = try thumbnailer.image(at: seconds, option: .nearestKeyFrame)
            XCTAssertEqual(image.time, keyFrame, accuracy: 0.001, "at \(seconds) s")
            XCTAssertEqual(image.requestedTime, seconds)
            XCTAssertTrue(try pixels(ofPNG: image.png) == ffmpegFrame(clip, at: keyFrame), "at \(seconds) s")
        }
        // Past the end: the last frame.
        let last = try thumbnailer.image(at: 60, option: .exact)
        XCTAssertEqual(last.time, 3.96, accuracy: 0.001)
    }

    func testSizesAreBounded() throws {
        let folder = try Fixtures.folder()
        let wide = folder.appendingPathComponent("thumbnail-wide.mp4").path
        try Fixtures.run(
            "ffmpeg",
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=2560x1440:rate=25:duration=1", "-c:v",
                "libx264",
                "-preset", "ultrafast", "-pix_fmt", "yuv420p", wide,
            ])
        let thumbnailer = Thumbnailer(source: try FileSource(path: wide))
        defer { thumbnailer.close() }
        let big = try thumbnailer.image(at: 0.5, option: .exact)
        XCTAssertEqual([big.width, big.height], [1920, 1080], "at most 1920 wide, keeping 16:9")
        XCTAssertEqual(try pixels(ofPNG: big.png, format: "gray").count, 1920 * 1080)
        let small = try thumbnailer.image(at: 0.5, option: .exact, maximumWidth: 160)
        XCTAssertEqual([small.width, small.height], [160, 90])
        let bounded = try thumbnailer.image(at: 0.5, option: .exact, maximumBytes: 100_000)
        XCTAssertLessThanOrEqual(bounded.png.count, 100_000)
        XCTAssertLessThan(bounded.width, 1920)
        print(
            "1920×1080: \(big.png.count) bytes; under 100 kB: \(bounded.width)×\(bounded.height), \(bounded.png.count) bytes"
        )
    }

    func testABatchAnswersEveryTimeInOrderAndCancelAllStopsWhatIsPending() throws {
        let clip = try clip()
        let thumbnailer = Thumbnailer(source: try FileSource(path: clip))
        defer { thumbnailer.close() }
        let results = ResultLog()
        let done = DispatchSemaphore(value: 0)
        let times = (0..<40).map { Double($0 % 20) * 0.2 }
        thumbnailer.requestImages(at: times, option: .exact) { index, result in
            results.append(index, result)
            if index == times.count - 1 { done.signal() }
        }
        // Let a few through, then cancel the rest.
        let deadline = Date().addingTimeInterval(20)
        while results.count < 2 && Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        thumbnailer.cancelAllRequests()
        XCTAssertEqual(done.wait(timeout: .now() + 20), .success, "every time is answered")
        let log = results.all
        XCTAssertEqual(log.map(\.index), Array(0..<times.count), "one result per time, in order")
        let images = log.prefix { if case .success = $0.result { true } else { false } }
        let cancelled = log.filter { if case .failure(let error) = $0.result { error.isCancelled } else { false } }
        XCTAssertGreaterThanOrEqual(images.count, 2)
        XCTAssertEqual(images.count + cancelled.count, times.count, "after the first cancelled time, only cancelled")
        XCTAssertGreaterThan(cancelled.count, 10, "most were still pending")
        for entry in images {
            guard case .success(let image) = entry.result else { continue }
            XCTAssertEqual(image.time, times[entry.index], accuracy: 0.001)
        }
        print("batch: \(images.count) images, then \(cancelled.count) cancelled")

        // Requests after a cancel are served.
        let after = DispatchSemaphore(value: 0)
        let later = ResultLog()
        thumbnailer.requestImages(at: [1.0], option: .nearestKeyFrame) { index, result in
            later.append(index, result)
            after.signal()
        }
        XCTAssertEqual(after.wait(timeout: .now() + 20), .success)
        guard case .success(let image)? = later.all.first?.result else { return XCTFail("\(later.all)") }
        XCTAssertEqual(image.time, 1.0, accuracy: 0.001)
    }

    func testAnInputWithoutVideoIsAnError() throws {
        let audio = try Fixtures.audioOnly(in: try Fixtures.folder())
        let thumbnailer = Thumbnailer(source: try FileSource(path: audio))
        XCTAssertThrowsError(try thumbnailer.image(at: 0, option: .exact)) { error in
            XCTAssertTrue("\(error)".contains("no video"), "\(error)")
        }
    }
}

/// Results of a batch, as they arrive on the thumbnailer's thread.
private final class ResultLog: @unchecked Sendable {
    // Invariant: `entries` is used only under `lock`.
    private let lock = NSLock()
    private var entries: [(index: Int, result: Result<Thumbnail, MediaError>)] = []

    func append(_ index: Int, _ result: Result<Thumbnail, MediaError>) {
        lock.withLock { entries.append((index, result)) }
    }
    var count: Int { lock.withLock { entries.count } }
    var all: [(index: Int, result: Result<Thumbnail, MediaError>)] { lock.withLock { entries } }
}
