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

    /// `path` played over the link: fetched once, without a stall, every frame as ffmpeg decodes it.
    private func assertCrossesTheLinkOnce(_ path: String, line: UInt = #line) throws {
        let played = try playOverLink(path, rate: "8mbit")
        assertFetchedOnce(played, line: line)
        XCTAssertEqual(played.stalls, 0, line: line)
        try assertFramesBitExact(path, line: line)
    }

    func testMP4WithItsIndexAtTheEndCrossesTheLinkOnce() throws {
        let path = try linkClip("moov-last.mp4")
        try assertCrossesTheLinkOnce(path)
    }

    func testMP4WithItsIndexFirstCrossesTheLinkOnce() throws {
        let path = try linkClip("moov-first.mp4", ["-movflags", "+faststart"])
        try assertCrossesTheLinkOnce(path)
    }

    func testMatroskaCrossesTheLinkOnce() throws {
        let path = try linkClip("clip.mkv")
        try assertCrossesTheLinkOnce(path)
    }

    func testMPEGTSCrossesTheLinkOnce() throws {
        let path = try linkClip("clip.ts")
        try assertCrossesTheLinkOnce(path)
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
