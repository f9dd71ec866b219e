import Foundation
import XCTest

@testable import CastMedia

/// Orientation from display matrices (ffmpeg's autorotate rule), and the window's colour conversion (10-bit to 8-bit,
/// HDR tone mapping) compared with the ffmpeg tool running the same filters.
final class VideoTransformTests: XCTestCase {
    private enum Matrices {
        /// A display matrix with a b c d (16.16 fixed point) and w = 1 (2.30).
        static func matrix(_ a: Int32, _ b: Int32, _ c: Int32, _ d: Int32) -> [Int32] {
            [a << 16, b << 16, 0, c << 16, d << 16, 0, 0, 0, 1 << 30]
        }
    }

    func testQuarterTurnsAreOneTransposeAndSwapTheSize() {
        // Turns (determinant 1): a plain transpose, the way the matrix says.
        let counter = VideoOrientation(displayMatrix: Matrices.matrix(0, -1, 1, 0))
        XCTAssertEqual(counter.filters, "transpose=cclock")
        XCTAssertTrue(counter.swapsWidthAndHeight)
        let clockwise = VideoOrientation(displayMatrix: Matrices.matrix(0, 1, -1, 0))
        XCTAssertEqual(clockwise.filters, "transpose=clock")
        XCTAssertTrue(clockwise.swapsWidthAndHeight)
        // Turns with a mirror (determinant -1): the transpose that flips too.
        XCTAssertEqual(
            VideoOrientation(displayMatrix: Matrices.matrix(0, 1, 1, 0)).filters, "transpose=cclock_flip")
        XCTAssertEqual(
            VideoOrientation(displayMatrix: Matrices.matrix(0, -1, -1, 0)).filters, "transpose=clock_flip"
        )
    }

    func testHalfTurnsAndMirrorsFlipWithoutSwapping() {
        let half = VideoOrientation(displayMatrix: Matrices.matrix(-1, 0, 0, -1))
        XCTAssertEqual(half.filters, "hflip,vflip")
        XCTAssertFalse(half.swapsWidthAndHeight)
        XCTAssertEqual(VideoOrientation(displayMatrix: Matrices.matrix(-1, 0, 0, 1)).filters, "hflip")
        XCTAssertEqual(VideoOrientation(displayMatrix: Matrices.matrix(1, 0, 0, -1)).filters, "vflip")
        XCTAssertEqual(VideoOrientation(displayMatrix: Matrices.matrix(1, 0, 0, 1)), .upright)
        XCTAssertEqual(VideoOrientation(displayMatrix: nil), .upright)
        XCTAssertEqual(VideoOrientation(displayMatrix: [1, 2, 3]), .upright)
        XCTAssertEqual(VideoOrientation(displayMatrix: [Int32](repeating: 0, count: 9)), .upright)
    }

    func testOddAnglesUseTheRotateFilter() {
        // 30° counter-clockwise in the matrix: the picture turns 330° clockwise, as ffmpeg's get_rotation says.
        let c = Int32((cos(Double.pi / 6) * 65536).rounded())
        let s = Int32((sin(Double.pi / 6) * 65536).rounded())
        let odd = VideoOrientation(displayMatrix: [c, -s, 0, s, c, 0, 0, 0, 1 << 30])
        XCTAssertEqual(odd.filters, "rotate=330.000000*PI/180")
        XCTAssertFalse(odd.swapsWidthAndHeight)
    }

    /// 10-bit SDR for the window: swscale's bicubic conversion to 8-bit 4:2:0, as `ffmpeg -vf format=yuv420p`,
    /// bit for bit; framemd5 output keeps the decoded 10-bit pictures, as `ffmpeg -f framemd5`.
    func testTenBitIsConvertedForTheWindowAsFFmpegConvertsIt() throws {
        let folder = try Fixtures.folder()
        let clip = folder.appendingPathComponent("high10.mkv").path
        try Fixtures.run(
            "ffmpeg",
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10:duration=1",
                "-c:v", "libx264",
                "-pix_fmt", "yuv420p10le", "-profile:v", "high10", clip,
            ])
        let window = try listing(clip, forDisplay: true, in: folder)
        XCTAssertEqual(window, try ffmpegListing(clip, filters: "format=yuv420p"))
        XCTAssertEqual(window.filter { !$0.hasPrefix("#") }.count, 10)
        XCTAssertEqual(
            try listing(clip, forDisplay: false, in: folder), try ffmpegListing(clip, filters: nil))
    }

    /// A PQ (HDR10) clip of flat grey at HDR reference white (203 nits, BT.2408) comes to the window tone-mapped:
    /// bit for bit what the ffmpeg tool makes with the same zscale/tonemap chain, and at an SDR level that is neither
    /// washed out nor black. Without the tone map, the window would show PQ's code values as BT.709 ones.
    func testPQIsToneMappedToASaneSDRLevelAsFFmpegDoes() throws {
        // Y' = PQ(203 / 10000) ≈ 0.581: 10-bit limited range 64 + 0.581 × 876 ≈ 573.
        let mean = try toneMappedGrey(transfer: "smpte2084", luma: 573)
        XCTAssertGreaterThan(mean, 90)
        XCTAssertLessThan(mean, 200)
    }

    /// HLG's reference white (75 % of the signal, BT.2408: 64 + 0.75 × 876 ≈ 721) comes out as PQ's does.
    func testHLGIsToneMappedToTheSameSDRLevelAsPQsReferenceWhite() throws {
        let mean = try toneMappedGrey(transfer: "arib-std-b67", luma: 721)
        XCTAssertEqual(mean, try toneMappedGrey(transfer: "smpte2084", luma: 573), accuracy: 4)
    }

    /// Makes a flat HDR grey (10-bit `luma`, neutral chroma 512, BT.2020) with the transfer `transfer` (ffmpeg's and
    /// zimg's name), checks that the window's pictures are bit for bit `ffmpeg -vf` of the tone-mapping chain, and
    /// returns their mean luma (8-bit limited range).
    private func toneMappedGrey(transfer: String, luma: Int) throws -> Double {
        let folder = try Fixtures.folder()
        let clip = folder.appendingPathComponent("\(transfer).mkv").path
        try Fixtures.run(
            "ffmpeg",
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=black:size=64x64:rate=10:duration=0.5", "-vf",
                "format=yuv420p10le,geq=lum=\(luma):cb=512:cr=512", "-c:v", "libx265", "-x265-params",
                "log-level=error",
                "-pix_fmt", "yuv420p10le", "-color_primaries", "bt2020", "-color_trc", transfer, "-colorspace",
                "bt2020nc", clip,
            ])
        let window = try listing(clip, forDisplay: true, in: folder)
        let filters = VideoTransform.toneMapFilters(
            transfer: transfer, matrix: "2020_ncl", primaries: "2020", range: "limited")
        XCTAssertEqual(window, try ffmpegListing(clip, filters: filters), transfer)
        XCTAssertEqual(window.filter { !$0.hasPrefix("#") }.count, 5, transfer)
        let pictures = try Fixtures.run(
            "ffmpeg", ["-v", "error", "-i", clip, "-vf", filters + ",extractplanes=y", "-f", "rawvideo", "-"])
        let mean = Double(pictures.reduce(0) { $0 + Int($1) }) / Double(max(pictures.count, 1))
        print("\(transfer) grey \(luma) on the window: luma \(String(format: "%.1f", mean)) of 16...235")
        return mean
    }

    /// A 4K picture is tone-mapped at 1080p (the tone map's cost bounded), smaller ones at their size.
    func testToneMappingIsBoundedAt1080p() {
        XCTAssertEqual(
            VideoTransform.toneMapSize(width: 3840, height: 2160).map { [$0.width, $0.height] },
            [1920, 1080])
        XCTAssertEqual(
            VideoTransform.toneMapSize(width: 4096, height: 2160).map { [$0.width, $0.height] },
            [1982, 1044])
        XCTAssertNil(VideoTransform.toneMapSize(width: 1920, height: 1080))
        XCTAssertNil(VideoTransform.toneMapSize(width: 640, height: 360))
    }

    /// libavfilter is opened when a graph is first made; where it cannot be, making one is an error that says why
    /// (the loader's words), not a crash: here asked for a version that does not exist.
    func testALibavfilterThatCannotBeOpenedIsAnErrorWithTheLoadersWords() throws {
        XCTAssertThrowsError(try FilterLibrary.load(soname: "libavfilter.so.999")) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("libavfilter could not be loaded"), text)
            XCTAssertTrue(text.contains("libavfilter.so.999"), text)
        }
        XCTAssertNoThrow(try FilterLibrary.load())
        XCTAssertTrue(FilterLibrary.isLoaded)
    }

    private func listing(_ clip: String, forDisplay: Bool, in folder: URL) throws -> [String] {
        let output = folder.appendingPathComponent("transform-\(forDisplay).md5").path
        try VideoTransform.writeFrameMD5(ofVideoIn: clip, forDisplay: forDisplay, to: output)
        return Self.comparable(try String(contentsOfFile: output, encoding: .utf8))
    }

    private func ffmpegListing(_ clip: String, filters: String?) throws -> [String] {
        let data = try Fixtures.run(
            "ffmpeg",
            ["-v", "error", "-i", clip, "-map", "0:v"] + (filters.map { ["-vf", $0] } ?? []) + [
                "-f", "framemd5", "-",
            ])
        return Self.comparable(String(decoding: data, as: UTF8.self))
    }

    private static func comparable(_ listing: String) -> [String] {
        listing.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#software") }
    }
}
