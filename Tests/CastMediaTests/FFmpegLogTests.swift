import Foundation
import XCTest

@testable import CastMedia

/// FFmpeg's own log lines go where the program routes them, as whole redacted lines, and nowhere by default.
final class FFmpegLogTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = try Fixtures.folder()
    }

    override func tearDown() {
        FFmpegLog.route(to: nil)
        try? FileManager.default.removeItem(at: folder)
    }

    /// An mp4 cut before its `moov` atom: opening it makes the mov demuxer log "moov atom not found" as an error.
    private func truncatedMovie() throws -> String {
        let clip = try Fixtures.h264AAC(in: folder)
        let data = try Data(contentsOf: URL(fileURLWithPath: clip))
        let truncated = folder.appendingPathComponent("truncated.mp4").path
        try data.prefix(4096).write(to: URL(fileURLWithPath: truncated))
        return truncated
    }

    func testRoutedLinesReachTheSinkWholeWithTheirSeverity() throws {
        let path = try truncatedMovie()
        let lines = Collector()
        FFmpegLog.route(to: { severity, line in lines.append(severity, line) }, minimum: .warning)
        XCTAssertThrowsError(try MediaMetadata.read(path: path))
        let received = lines.all
        let moov = try XCTUnwrap(received.first { $0.1.contains("moov atom not found") }, "\(received)")
        XCTAssertEqual(moov.0, .error)
        XCTAssertTrue(moov.1.hasPrefix("[mov,mp4"), moov.1)
        XCTAssertFalse(received.contains { $0.1.contains("\n") }, "lines are passed whole, without newlines")
    }

    func testLinesBelowTheMinimumAreDropped() throws {
        let path = try truncatedMovie()
        let lines = Collector()
        FFmpegLog.route(to: { severity, line in lines.append(severity, line) }, minimum: .error)
        _ = try? MediaMetadata.read(path: path)
        XCTAssertFalse(lines.all.isEmpty)
        XCTAssertEqual(Set(lines.all.map(\.0)), [.error])
    }

    /// The default for a library: nothing of FFmpeg's on the host program's standard error.
    func testUnroutedLinesAreNotPrinted() throws {
        let path = try truncatedMovie()
        FFmpegLog.route(to: nil)
        let captured = folder.appendingPathComponent("stderr").path
        let file = open(captured, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        XCTAssertGreaterThanOrEqual(file, 0)
        let saved = dup(STDERR_FILENO)
        dup2(file, STDERR_FILENO)
        _ = try? MediaMetadata.read(path: path)
        dup2(saved, STDERR_FILENO)
        close(saved)
        close(file)
        let printed = try String(contentsOfFile: captured, encoding: .utf8)
        XCTAssertFalse(printed.contains("moov"), printed)
    }

    func testCredentialsAreCutFromEveryURLInALine() {
        XCTAssertEqual(
            URLInput.redactingAll("[hls @ 0x1] Opening 'https://user:secret@cdn.example/a.ts' for reading"),
            "[hls @ 0x1] Opening 'https://cdn.example/a.ts' for reading")
        XCTAssertEqual(
            URLInput.redactingAll("http://a:b@h1/x and https://c@h2:8443/y?u=v@w"),
            "http://h1/x and https://h2:8443/y?u=v@w")
        XCTAssertEqual(URLInput.redactingAll("no url @ all"), "no url @ all")
    }
}

/// Lines collected from FFmpeg's threads. Thread-safety: guarded by `lock`.
private final class Collector: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [(FFmpegLog.Severity, String)] = []
    func append(_ severity: FFmpegLog.Severity, _ line: String) { lock.withLock { lines.append((severity, line)) } }
    var all: [(FFmpegLog.Severity, String)] { lock.withLock { lines } }
}
