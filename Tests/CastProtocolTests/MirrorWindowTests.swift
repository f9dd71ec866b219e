import CastProtocol
import XCTest

final class MirrorWindowTests: XCTestCase {
    func testIdsAsXwininfoWritesThemOrDecimal() {
        XCTAssertEqual(MirrorWindow.id("0x2a00007"), 0x2a0_0007)
        XCTAssertEqual(MirrorWindow.id("0X1F"), 0x1F)
        XCTAssertEqual(MirrorWindow.id("44040199"), 44_040_199)
    }

    func testAnythingElseIsRefused() {
        for text in ["", "0x", "0", "-5", "kitchen", "0x20000000", "0x2a00007 ", "0x0000000000001", "1e5"] {
            XCTAssertNil(MirrorWindow.id(text), text)
        }
    }
}
