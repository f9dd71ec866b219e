import Foundation
import XCTest

@testable import CastAirPlay

/// Binary property lists are read by our own bounded reader: what Foundation writes reads back the same, and
/// malformed lists (the fuzzer's crash among them) are refused instead of crashing.
final class BinaryPropertyListTests: XCTestCase {
    func testWhatFoundationWritesReadsBack() throws {
        let written: [String: Any] = [
            "Content-Location": "http://10.77.1.2:8000/clip.mp4", "Start-Position": 0.25, "rate": 1,
            "readyToPlay": true, "name": "Wohnzimmer – Küche", "big": 5_000_000_000, "negative": -3,
            "nested": ["list": [1, "two", 3.5], "empty": [String: Any]()], "blob": Data([1, 2, 3]),
        ]
        let bytes = PropertyList.binary(written)
        let read = try XCTUnwrap(PropertyList.dictionary(from: bytes))
        XCTAssertEqual(read["Content-Location"] as? String, "http://10.77.1.2:8000/clip.mp4")
        XCTAssertEqual(PropertyList.number(read["Start-Position"]), 0.25)
        XCTAssertEqual(PropertyList.number(read["rate"]), 1)
        XCTAssertEqual((read["readyToPlay"] as? NSNumber)?.boolValue, true)
        XCTAssertEqual(read["name"] as? String, "Wohnzimmer – Küche")
        XCTAssertEqual(PropertyList.number(read["big"]), 5_000_000_000)
        XCTAssertEqual(PropertyList.number(read["negative"]), -3)
        let nested = try XCTUnwrap(read["nested"] as? [String: Any])
        let list = try XCTUnwrap(nested["list"] as? [Any])
        XCTAssertEqual(list.count, 3)
        XCTAssertEqual(list[1] as? String, "two")
        XCTAssertEqual(PropertyList.number(list[2]), 3.5)
        XCTAssertEqual((nested["empty"] as? [String: Any])?.count, 0)
        XCTAssertEqual(read["blob"] as? Data, Data([1, 2, 3]))
    }

    /// The input on which Foundation's parser crashed (SEGV bridging a set to NSSet), found by AirPlayHTTPFuzz.
    func testTheFuzzersCrashIsRefused() throws {
        let crash: [UInt8] = [
            0x62, 0x70, 0x6C, 0x69, 0x73, 0x74, 0x30, 0x30, 0xC3, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x5F,
            0x10, 0x10, 0x43, 0x6F, 0x6E, 0x74, 0x65, 0x6E, 0x74, 0x2D, 0x4C, 0x6F, 0x63, 0x61, 0x74, 0x69,
            0x6F, 0x6E, 0x5E, 0x53, 0x74, 0x61, 0x72, 0x74, 0x2D, 0x50, 0x6F, 0x73, 0x69, 0x74, 0x69, 0x6F,
            0x6E, 0x5F, 0x10, 0x12, 0x58, 0x2D, 0x41, 0x70, 0x70, 0x6C, 0x65, 0x2D, 0x53, 0x65, 0x73, 0x73,
            0x69, 0x6F, 0x6E, 0x2D, 0x49, 0xBD, 0xA0, 0xEF, 0xE1, 0x68, 0x74, 0x74, 0x70, 0x3A, 0x2F, 0x2F,
            0x31, 0x30, 0x2E, 0x37, 0x37, 0x2E, 0x31, 0x2E, 0x32, 0x3A, 0x38, 0x30, 0x30, 0x30, 0x2F, 0x63,
            0x6C, 0x69, 0x70, 0x2E, 0x6D, 0x70, 0x34, 0x10, 0x00, 0x5F, 0x10, 0x24, 0x39, 0x66, 0x33, 0x65,
            0x35, 0x63, 0x32, 0x61, 0x2D, 0x30, 0x30, 0x30, 0x30, 0x2D, 0x34, 0x30, 0x30, 0x30, 0x2D, 0x38,
            0x30, 0x30, 0x30, 0x2D, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x31,
            0x08, 0x0F, 0x22, 0x31, 0x46, 0x67, 0x69, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x90,
        ]
        XCTAssertNil(PropertyList.dictionary(from: crash))
        XCTAssertNil(BinaryPropertyList.object(from: crash))
    }

    func testMalformedListsAreRefused() {
        var good = PropertyList.binary(["a": "b"])
        XCTAssertNotNil(BinaryPropertyList.object(from: good))
        XCTAssertNil(BinaryPropertyList.object(from: Array(good.prefix(good.count - 1))), "cut trailer")
        XCTAssertNil(BinaryPropertyList.object(from: Array("bplist00".utf8)), "no trailer")
        good[good.count - 1] = 0xFF  // the offset table beyond the end
        XCTAssertNil(BinaryPropertyList.object(from: good))
        // A dictionary that holds itself: object 0 = { "k": object 0 }.
        let cycle: [UInt8] =
            Array("bplist00".utf8) + [0xD1, 0x01, 0x00, 0x51, 0x6B] + [8, 11]
            + [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, 2] + [0, 0, 0, 0, 0, 0, 0, 0]
            + [0, 0, 0, 0, 0, 0, 0, 13]
        XCTAssertNil(BinaryPropertyList.object(from: cycle))
        // A string claiming 2^62 UTF-16 units.
        var huge = Array("bplist00".utf8) + [0x6F, 0x13] + [0x40, 0, 0, 0, 0, 0, 0, 0] + [8]
        huge +=
            [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0, 0, 0, 0, 0, 0]
            + [0, 0, 0, 0, 0, 0, 0, 18]
        XCTAssertNil(BinaryPropertyList.object(from: huge))
    }

    /// 15 arrays, each with 3800 references to the next: 57 KB that name 3800^15 nodes. Refused at once, not
    /// expanded until memory runs out.
    func testTheReferenceBombIsRefusedQuickly() throws {
        let bomb = Fixtures.referenceBomb()
        XCTAssertLessThanOrEqual(bomb.count, HTTPRequestParser.Limits().body, "the bomb fits in one /play body")
        let started = ContinuousClock.now
        XCTAssertNil(BinaryPropertyList.object(from: bomb))
        let elapsed = ContinuousClock.now - started
        // Debug build: the walk stops after 17 of the arrays, in about 0.1 s (1.4 s on a loaded CI machine). An
        // unbounded walk runs until memory runs out: the bound catches that, not the speed.
        print("the reference bomb was refused after \(elapsed)")
        XCTAssertLessThan(elapsed, .seconds(10))
        XCTAssertNil(PropertyList.dictionary(from: bomb))
        let request = HTTPRequest(
            method: "POST", path: "/play", headers: [("Content-Type", "application/x-apple-binary-plist")], body: bomb)
        XCTAssertThrowsError(try AirPlayRequest(request)) { error in
            XCTAssertEqual((error as? HTTPRequestError)?.status, .badRequest)
        }
        print("the \(bomb.count)-byte reference bomb was refused in \(elapsed)")
    }

    /// Sharing is still fine within the bounds: 3000 references to one string, and a string reached 100 times.
    func testSharedObjectsWithinTheBoundsRead() throws {
        let shared = Fixtures.referenceBomb(arrays: 1, width: 3000)
        let read = try XCTUnwrap(PropertyList.dictionary(from: shared))
        XCTAssertEqual((read["Content-Location"] as? [Any])?.count, 3000)
        // One 20 KB string reached 100 times is 2 MB made: over the byte bound.
        let wide = Fixtures.referenceBomb(arrays: 1, width: 100, leaf: String(repeating: "a", count: 20_000))
        XCTAssertNil(PropertyList.dictionary(from: wide))
        let narrow = Fixtures.referenceBomb(arrays: 1, width: 40, leaf: String(repeating: "a", count: 20_000))
        XCTAssertEqual((PropertyList.dictionary(from: narrow)?["Content-Location"] as? [Any])?.count, 40)
    }
}

private enum Fixtures {
    /// `{"Content-Location": A1}` where each of `arrays` arrays holds `width` references to the next, and the last
    /// one `width` references to `leaf` (an ASCII string; the integer 0 when nil).
    static func referenceBomb(arrays: Int = 15, width: Int = 3800, leaf: String? = nil) -> [UInt8] {
        var objects: [[UInt8]] = []
        objects.append([0xD1, 1, 2])  // object 0: { object 1: object 2 }
        objects.append(asciiString("Content-Location"))  // object 1
        for index in 0..<arrays {  // objects 2...arrays+1
            objects.append(marker(0xA, count: width) + Array(repeating: UInt8(index + 3), count: width))
        }
        objects.append(leaf.map(asciiString) ?? [0x10, 0x00])  // object arrays+2
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(bytes.count)
            bytes += object
        }
        let table = bytes.count
        for offset in offsets { bytes += bigEndian(offset).suffix(4) }
        bytes += [0, 0, 0, 0, 0, 0, 4, 1] + bigEndian(objects.count) + bigEndian(0) + bigEndian(table)
        return bytes
    }

    private static func asciiString(_ text: String) -> [UInt8] {
        marker(0x5, count: text.utf8.count) + Array(text.utf8)
    }

    /// A marker with its count: in the low nibble below 15, else as a following 2-byte integer.
    private static func marker(_ kind: UInt8, count: Int) -> [UInt8] {
        count < 15 ? [kind << 4 | UInt8(count)] : [kind << 4 | 0xF, 0x11, UInt8(count >> 8), UInt8(count & 0xFF)]
    }

    private static func bigEndian(_ value: Int) -> [UInt8] {
        (0..<8).reversed().map { UInt8(value >> ($0 * 8) & 0xFF) }
    }
}
