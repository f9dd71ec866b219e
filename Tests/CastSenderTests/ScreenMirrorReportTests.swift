import XCTest

@testable import CastSender

#if canImport(Glibc)
    import Glibc
#endif

/// What `cast-mirror` writes once the screen is open, read from a pipe as `ScreenMirror` reads it: figures with the
/// notes written before them, the word it ends with, and the notes it writes after its last figures, kept for
/// `lastNotes` (they were dropped with the end of the pipe: "the sound capture ended" never reached the user).
final class ScreenMirrorReportTests: XCTestCase {
    /// Reports of a helper that wrote `lines` and exited.
    private func helper(writing lines: [String]) throws -> MirrorHelperReports {
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        let text = Array(lines.map { $0 + "\n" }.joined().utf8)
        XCTAssertLessThan(text.count, 65536, "written whole before anything reads")
        XCTAssertEqual(text.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }, text.count)
        close(ends[1])
        return MirrorHelperReports(fd: ends[0])
    }

    func testNotesGoWithTheFiguresAfterThemAndTheLastOnesAreKept() throws {
        let reports = try helper(writing: [
            "note: the pointer cannot be followed", "stats 30.0 2000000 4000000 1280x720 libx264",
            "stats 29.5 1900000 4000000 1280x720 libx264", "garbage", "note: the sound capture ended",
            "ended: the window 0x400001 was closed",
        ])
        let first = try XCTUnwrap(reports.nextFigures())
        XCTAssertEqual(first.notes, ["the pointer cannot be followed"])
        XCTAssertEqual([first.fps, Double(first.width), Double(first.height)], [30, 1280, 720])
        XCTAssertEqual(reports.nextFigures()?.notes, [])
        XCTAssertNil(reports.nextFigures())
        XCTAssertEqual(reports.lastNotes, ["the sound capture ended"], "the notes after the last figures")
        XCTAssertEqual(reports.ending(timeout: 0), .closed("the window 0x400001 was closed"))
    }

    func testAHelperThatNotesWithoutEndIsEchoedOnlySoOften() throws {
        let reports = try helper(
            writing: Array(repeating: "note: again", count: 50) + ["error: the X server went away"])
        XCTAssertNil(reports.nextFigures())
        XCTAssertEqual(reports.lastNotes.count, MirrorHelperReports.notesKept)
        XCTAssertEqual(reports.ending(timeout: 0), .failed("the X server went away"))
    }
}
