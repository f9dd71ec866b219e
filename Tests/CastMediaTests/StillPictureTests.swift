import CastMedia
import CastProtocol
import Foundation
import XCTest

/// `PlayerConfiguration.still`: one picture, shown as FFmpeg decodes it and held until `stop()`, opened only as a JPEG
/// or PNG.
final class StillPictureTests: XCTestCase {
    private func photo(_ name: String, in folder: URL) throws -> String {
        let path = folder.appendingPathComponent(name).path
        _ = try Fixtures.run("ffmpeg", ["-f", "lavfi", "-i", "testsrc2=size=320x240", "-frames:v", "1", path])
        return path
    }

    private func player(_ path: String, still: Bool, md5: String, readAhead: Bool = false) throws -> (Player, EventLog)
    {
        let log = EventLog()
        var configuration = PlayerConfiguration(audio: .none, video: .framemd5(path: md5))
        configuration.still = still
        let file = try FileSource(path: path)
        let source: any MediaSource = readAhead ? ReadAheadSource(file) : file
        let player = Player(source: source, configuration: configuration) { log.append($0) }
        return (player, log)
    }

    func testAStillPictureIsHeldUntilStopped() throws {
        let folder = try Fixtures.folder()
        for (name, readAhead) in [("photo.jpg", false), ("photo.png", false), ("read-ahead.jpg", true)] {
            let path = try photo(name, in: folder)
            let md5 = folder.appendingPathComponent("\(name).framemd5").path
            let (player, log) = try player(path, still: true, md5: md5, readAhead: readAhead)
            player.start()
            XCTAssertNotNil(log.wait { $0 == .videoActive(true) }, "\(name): \(log.events)")
            Thread.sleep(forTimeInterval: 1.5)
            XCTAssertNil(log.finish, "\(name) ended by itself: \(log.events)")
            XCTAssertEqual(
                Fixtures.comparable(try String(contentsOfFile: md5, encoding: .utf8)),
                Fixtures.comparable(try Fixtures.ffmpegFrameMD5(path)), name)
            XCTAssertLessThan(stopAndWait(player), 2, name)
            XCTAssertEqual(log.finish?.reason, .userExited, "\(name): \(log.events)")
        }
    }

    /// The same picture without `still` is a one-frame video: it ends by itself.
    func testWithoutStillThePictureEnds() throws {
        let folder = try Fixtures.folder()
        let path = try photo("photo.jpg", in: folder)
        let (player, log) = try player(path, still: false, md5: folder.appendingPathComponent("out.framemd5").path)
        _ = try playToEnd(player, timeout: 20)
        XCTAssertEqual(log.finish?.reason, .playbackEnded, "\(log.events)")
    }

    /// A film is not a picture: with `still` it is not opened (only `jpeg_pipe` and `png_pipe` may read the input).
    func testAStillOpensNothingButAPicture() throws {
        let folder = try Fixtures.folder()
        let clip = try Fixtures.videoOnly(in: folder)
        let (player, log) = try player(clip, still: true, md5: folder.appendingPathComponent("out.framemd5").path)
        _ = try playToEnd(player, timeout: 20)
        XCTAssertEqual(log.finish?.reason, .playbackError, "\(log.events)")
        XCTAssertFalse(log.events.contains(.videoActive(true)), "\(log.events)")
    }
}
