import CastProtocol
import XCTest

final class MirrorCursorTests: XCTestCase {
    private enum Fixtures {
        /// A 2×3 shape, its hot spot at (1, 2), each pixel's bytes its index.
        static let shape = MirrorCursor.Shape(
            width: 2, height: 3, hotX: 1, hotY: 2, pixels: (0..<24).map { UInt8($0) })!
    }

    func testAShapeAndAMoveComeBackAsTheyWent() throws {
        let shaped = MirrorCursor(x: 640, y: -3, shape: Fixtures.shape)
        XCTAssertEqual(shaped.encoded.count, MirrorCursor.headerLength + 24)
        XCTAssertEqual(try MirrorCursor(decoding: shaped.encoded), shaped)
        let moved = MirrorCursor(x: 12, y: 700)
        XCTAssertEqual(moved.encoded.count, MirrorCursor.headerLength)
        XCTAssertEqual(try MirrorCursor(decoding: moved.encoded), moved)
    }

    func testACursorUnitIsNeverTakenForAPicture() {
        XCTAssertTrue(MirrorCursor.isCursor(MirrorCursor(x: 0, y: 0).encoded))
        XCTAssertFalse(MirrorCursor.isCursor([0, 0, 0, 1, 0x09, 0xF0]), "an access unit (Annex B)")
        XCTAssertFalse(MirrorCursor.isCursor(Array("CUR".utf8)))
    }

    func testShapesOutOfBoundsAreRefused() {
        XCTAssertNil(
            MirrorCursor.Shape(width: 257, height: 1, hotX: 0, hotY: 0, pixels: [UInt8](repeating: 0, count: 257 * 4)))
        XCTAssertNil(
            MirrorCursor.Shape(width: 2, height: 2, hotX: 2, hotY: 0, pixels: [UInt8](repeating: 0, count: 16)))
        XCTAssertNil(
            MirrorCursor.Shape(width: 2, height: 2, hotX: 0, hotY: 0, pixels: [UInt8](repeating: 0, count: 15)))
    }

    func testMalformedUnitsThrow() {
        let shaped = MirrorCursor(x: 1, y: 1, shape: Fixtures.shape).encoded
        // Cut short, one byte too many, a move carrying pixels, a header alone.
        for payload in [
            Array(shaped.dropLast()), shaped + [0], MirrorCursor(x: 1, y: 1).encoded + [0, 0, 0, 0],
            Array(shaped.prefix(10)),
        ] {
            XCTAssertThrowsError(try MirrorCursor(decoding: payload), "\(payload.count) bytes")
        }
        var huge = MirrorCursor(x: 1, y: 1).encoded
        huge[12] = 0x10  // a width of 4096
        huge[15] = 1
        XCTAssertThrowsError(try MirrorCursor(decoding: huge))
    }
}
