import XCTest

@testable import CastMedia

/// The four scaling modes' arithmetic, for a 4:3 picture on a 16:9 screen and the other way round.
final class ScalingModeTests: XCTestCase {
    private func layout(_ mode: ScalingMode, picture: (Int, Int), display: (Double, Double)? = nil, output: (Int, Int))
        -> VideoLayout
    {
        let display = display ?? (Double(picture.0), Double(picture.1))
        return VideoLayout(
            mode: mode, pictureWidth: picture.0, pictureHeight: picture.1, displayWidth: display.0,
            displayHeight: display.1, outputWidth: output.0, outputHeight: output.1)
    }

    func testAspectFitLeavesBars() {
        let l = layout(.aspectFit, picture: (320, 240), output: (1280, 720))
        XCTAssertEqual(l.source, PixelRect(x: 0, y: 0, width: 320, height: 240))
        XCTAssertEqual(l.destination, PixelRect(x: 160, y: 0, width: 960, height: 720))
        let wide = layout(.aspectFit, picture: (1920, 1080), output: (1280, 1024))
        XCTAssertEqual(wide.destination, PixelRect(x: 0, y: 152, width: 1280, height: 720))
    }

    func testAspectFillCrops() {
        let l = layout(.aspectFill, picture: (320, 240), output: (1280, 720))
        XCTAssertEqual(l.source, PixelRect(x: 0, y: 30, width: 320, height: 180))
        XCTAssertEqual(l.destination, PixelRect(x: 0, y: 0, width: 1280, height: 720))
    }

    func testFillStretches() {
        let l = layout(.fill, picture: (320, 240), output: (1280, 720))
        XCTAssertEqual(l.source, PixelRect(x: 0, y: 0, width: 320, height: 240))
        XCTAssertEqual(l.destination, PixelRect(x: 0, y: 0, width: 1280, height: 720))
    }

    func testNoneCentresAndCropsWhatOverflows() {
        let small = layout(.none, picture: (320, 240), output: (1280, 720))
        XCTAssertEqual(small.destination, PixelRect(x: 480, y: 240, width: 320, height: 240))
        let large = layout(.none, picture: (1920, 1080), output: (1280, 720))
        XCTAssertEqual(large.source, PixelRect(x: 320, y: 180, width: 1280, height: 720))
        XCTAssertEqual(large.destination, PixelRect(x: 0, y: 0, width: 1280, height: 720))
    }

    func testSampleAspectRatioIsHonoured() {
        // 720×576 anamorphic PAL shown as 1024×576 (16:9) fits a 16:9 screen exactly.
        let l = layout(.aspectFit, picture: (720, 576), display: (1024, 576), output: (1280, 720))
        XCTAssertEqual(l.source, PixelRect(x: 0, y: 0, width: 720, height: 576))
        XCTAssertEqual(l.destination, PixelRect(x: 0, y: 0, width: 1280, height: 720))
    }

    func testRawValuesAreTheSeedsNames() {
        XCTAssertEqual(ScalingMode.allCases.map(\.rawValue), ["none", "aspectFit", "aspectFill", "fill"])
    }
}
