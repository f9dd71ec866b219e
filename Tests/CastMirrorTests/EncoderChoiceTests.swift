import CastMirror
import Foundation
import XCTest

/// `cast mirror --encoder`: the rule that turns auto/software/vaapi and the VA-API probe into the encoder that runs (or
/// a refusal), and the probe itself on this machine, which has no GPU: each failure is a reason in words, nothing
/// crashes and nothing is left open.
final class EncoderChoiceTests: XCTestCase {
    private var folder: String!

    override func setUpWithError() throws {
        folder =
            FileManager.default.temporaryDirectory.appendingPathComponent("encoder-choice-\(getpid())-\(UUID())")
            .path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: folder) }

    func testSoftwareNeverProbesAndAutoFallsBackWithTheReasonWhileVAAPIRefuses() {
        var probes = 0
        let works = { () -> String? in
            probes += 1
            return nil
        }
        let fails = { () -> String? in
            probes += 1
            return "no VA-API device: /dev/dri has no render node"
        }
        XCTAssertEqual(MirrorEncoderChoice.choose(.software, probe: fails), .use(.software, note: nil))
        XCTAssertEqual(MirrorEncoderChoice.choose(.software, probe: works), .use(.software, note: nil))
        XCTAssertEqual(probes, 0, "software does not probe")
        XCTAssertEqual(MirrorEncoderChoice.choose(.auto, probe: works), .use(.vaapi, note: nil))
        XCTAssertEqual(MirrorEncoderChoice.choose(.vaapi, probe: works), .use(.vaapi, note: nil))
        XCTAssertEqual(
            MirrorEncoderChoice.choose(.auto, probe: fails),
            .use(
                .software,
                note: "VA-API is not used (no VA-API device: /dev/dri has no render node): encoding with libx264"))
        XCTAssertEqual(
            MirrorEncoderChoice.choose(.vaapi, probe: fails),
            .refuse("--encoder vaapi: no VA-API device: /dev/dri has no render node"))
        XCTAssertEqual(probes, 4)
    }

    func testTheFirstRenderNodeIsTheLowestNumbered() throws {
        XCTAssertNil(VAAPIDevice.firstRenderNode(in: folder), "an empty folder")
        XCTAssertNil(VAAPIDevice.firstRenderNode(in: "\(folder!)/absent"), "no folder")
        for name in ["card0", "renderD129", "renderD128", "renderDx", "by-path"] {
            XCTAssertTrue(FileManager.default.createFile(atPath: "\(folder!)/\(name)", contents: nil))
        }
        XCTAssertEqual(VAAPIDevice.firstRenderNode(in: folder), "\(folder!)/renderD128")
    }

    func testNoRenderNodeIsSaidInWords() {
        XCTAssertThrowsError(try VAAPIDevice(path: nil, renderNodes: folder)) { error in
            XCTAssertEqual("\(error)", "no VA-API device: \(folder!) has no render node")
        }
        XCTAssertThrowsError(try VAAPIDevice(path: "\(folder!)/renderD128")) { error in
            XCTAssertEqual("\(error)", "no VA-API device: \(folder!)/renderD128 does not exist")
        }
        XCTAssertThrowsError(try VAAPIDevice(path: "renderD128")) { error in
            XCTAssertTrue("\(error)".contains("absolute path"), "\(error)")
        }
    }

    /// A device that is no GPU (/dev/null, a plain file, found as a render node or named) does not open: FFmpeg's
    /// words, and over many tries no descriptor is left open (the device context freed each time).
    func testADeviceThatIsNoGPUDoesNotOpenAndLeavesNothingOpen() throws {
        let plain = "\(folder!)/renderD128"
        XCTAssertTrue(FileManager.default.createFile(atPath: plain, contents: Data(repeating: 7, count: 4096)))
        func descriptors() throws -> Int { try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count }
        var reasons: [String] = []
        for path: String? in [nil, plain, "/dev/null"] {
            XCTAssertThrowsError(try VAAPIDevice(path: path, renderNodes: folder)) { reasons.append("\($0)") }
        }
        XCTAssertEqual(reasons.count, 3)
        for (reason, path) in zip(reasons, [plain, plain, "/dev/null"]) {
            XCTAssertTrue(reason.hasPrefix("VA-API device \(path) did not open: "), reason)
            XCTAssertGreaterThan(reason.count, "VA-API device \(path) did not open: ".count + 3, "FFmpeg's text")
        }
        let before = try descriptors()
        for _ in 0..<100 { _ = try? VAAPIDevice(path: "/dev/null") }
        XCTAssertEqual(try descriptors(), before, "each failed open closed what it opened")
    }

    /// The whole choice as cast-mirror makes it here: auto encodes with libx264 and says why, software says nothing,
    /// vaapi is refused as a usage error (exit 2) with the reason.
    func testOpeningOnThisMachineFallsBackOrRefuses() throws {
        let auto = try MirrorEncoderChoice.open(
            .auto, device: nil, renderNodes: folder, width: 320, height: 240, fps: 30, bitRate: 1_000_000)
        XCTAssertEqual(auto.encoder.name, "libx264")
        XCTAssertEqual(
            auto.note, "VA-API is not used (no VA-API device: \(folder!) has no render node): encoding with libx264")
        let named = try MirrorEncoderChoice.open(
            .auto, device: "/dev/null", width: 320, height: 240, fps: 30, bitRate: 1_000_000)
        XCTAssertEqual(named.encoder.name, "libx264")
        XCTAssertTrue(named.note?.contains("VA-API device /dev/null did not open: ") == true, "\(named.note ?? "")")
        let software = try MirrorEncoderChoice.open(
            .software, device: nil, renderNodes: folder, width: 320, height: 240, fps: 30, bitRate: 1_000_000)
        XCTAssertEqual(software.encoder.name, "libx264")
        XCTAssertNil(software.note)
        XCTAssertThrowsError(
            try MirrorEncoderChoice.open(
                .vaapi, device: nil, renderNodes: folder, width: 320, height: 240, fps: 30, bitRate: 1_000_000)
        ) { error in
            XCTAssertEqual((error as? MirrorError)?.isUsage, true)
            XCTAssertEqual("\(error)", "--encoder vaapi: no VA-API device: \(folder!) has no render node")
        }
        // The libx264 it fell back to encodes.
        let pixels = [UInt8](repeating: 0x80, count: 320 * 240 * 4)
        var units = 0
        try pixels.withUnsafeBytes { raw in
            try auto.encoder.encode(raw.baseAddress!, stride: 320 * 4, captured: 1_000_000) { unit in
                XCTAssertGreaterThan(unit.count, 0)
                units += 1
            }
        }
        XCTAssertEqual(units, 1)
    }

    /// VA-API takes a new bit rate by reopening (a key picture): every drop does, rises are gathered to a quarter.
    func testVAAPIReopensForADropOrARiseOfAQuarter() {
        XCTAssertTrue(VAAPIScreenEncoder.reopens(from: 4_000_000, to: 3_900_000))
        XCTAssertFalse(VAAPIScreenEncoder.reopens(from: 4_000_000, to: 4_000_000))
        XCTAssertFalse(VAAPIScreenEncoder.reopens(from: 4_000_000, to: 4_400_000))
        XCTAssertFalse(VAAPIScreenEncoder.reopens(from: 4_000_000, to: 4_999_999))
        XCTAssertTrue(VAAPIScreenEncoder.reopens(from: 4_000_000, to: 5_000_000))
    }
}

/// The probe's bound: a driver that hangs costs the helper the timeout, not forever.
final class VAAPIProbeTests: XCTestCase {
    func testAProbeThatHangsIsGivenUpAfterItsTimeoutWithWords() {
        let start = Date()
        let result = VAAPIProbe.bounded(timeout: 0.2, what: "VA-API device /dev/dri/renderD128") {
            () throws(MirrorError) -> Int in
            Thread.sleep(forTimeInterval: 3)
            return 1
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 2.5, "given up, not waited for")
        guard case .failure(let error) = result else { return XCTFail("\(result)") }
        XCTAssertEqual(error.description, "VA-API device /dev/dri/renderD128 did not answer within 0.2 s")
    }

    func testAProbeThatAnswersInTimeIsHandedOver() {
        let result = VAAPIProbe.bounded(timeout: 20, what: "the device") { () throws(MirrorError) -> [Int] in [1, 2] }
        XCTAssertEqual(try? result.get(), [1, 2])
        let failed = VAAPIProbe.open(device: "/dev/null", width: 320, height: 240, fps: 30, bitRate: 1_000_000)
        guard case .failure(let error) = failed else { return XCTFail("/dev/null opened") }
        XCTAssertTrue(error.description.hasPrefix("VA-API device /dev/null did not open: "), error.description)
    }
}
