import CastProtocol
import Foundation
import XCTest

/// Served media over a shaped lab link (the phone's egress limited with `tc tbf`, `scripts/lab shape`): castd keeps
/// what arrived as byte ranges, so every byte of the file crosses the link once, whatever the demuxer's seeks (an
/// MP4 index at the end, interleaving, Matroska's cues). Judged from the phone's interface counters, outside both
/// programs, and from what castd played (framemd5 against ffmpeg's, the audio at ALSA against ffmpeg's decode).
final class LinkTests: LabTestCase {
    override class var labPrefix: String { "e2k" }

    // A link of 8 Mbit/s: about six times the clips' rate, so nothing stalls.

    func testMP4WithItsIndexAtTheEndCrossesTheLinkOnce() throws {
        let path = try linkClip("moov-last.mp4")
        let played = try playOverLink(path, rate: "8mbit")
        assertFetchedOnce(played)
        XCTAssertEqual(played.stalls, 0)
        try assertFramesBitExact(path)
    }

    func testMP4WithItsIndexFirstCrossesTheLinkOnce() throws {
        let path = try linkClip("moov-first.mp4", ["-movflags", "+faststart"])
        let played = try playOverLink(path, rate: "8mbit")
        assertFetchedOnce(played)
        XCTAssertEqual(played.stalls, 0)
        try assertFramesBitExact(path)
    }

    func testMatroskaCrossesTheLinkOnce() throws {
        let path = try linkClip("clip.mkv")
        let played = try playOverLink(path, rate: "8mbit")
        assertFetchedOnce(played)
        XCTAssertEqual(played.stalls, 0)
        try assertFramesBitExact(path)
    }

    func testMPEGTSCrossesTheLinkOnce() throws {
        let path = try linkClip("clip.ts")
        let played = try playOverLink(path, rate: "8mbit")
        assertFetchedOnce(played)
        XCTAssertEqual(played.stalls, 0)
        try assertFramesBitExact(path)
    }

    func testFLACCrossesTheLinkOnceAndPlaysEverySample() throws {
        let path = try linkFLAC()
        let played = try playOverLink(path, rate: "8mbit")
        assertFetchedOnce(played)
        XCTAssertEqual(played.stalls, 0)
        // The samples at ALSA are ffmpeg's decode, bit for bit (48 kHz stereo S16 needs no conversion), wherever
        // they begin in the capture.
        let reference = "\(work!)/reference.raw"
        let decoded = try runCommand(["ffmpeg", "-v", "error", "-y", "-i", path, "-f", "s16le", reference])
        XCTAssertEqual(decoded.status, 0, decoded.stderr)
        let expected = try Data(contentsOf: URL(fileURLWithPath: reference))
        let captured = try Data(contentsOf: URL(fileURLWithPath: "\(work!)/audio.raw"))
        let start = try XCTUnwrap(captured.range(of: expected.prefix(4800))?.lowerBound, "the first samples")
        XCTAssertEqual(captured[start...].prefix(expected.count), expected)
    }
}
