import XCTest

@testable import CastReceiver

final class ConfigFileTests: XCTestCase {
    func testKeysValuesCommentsAndBlankLines() throws {
        let text = """
            # castd settings
            name = Living Room   # the TV
            audio-device=hw:0

            port =7100\r
            """
        XCTAssertEqual(
            try ConfigFile.parse(text),
            [
                .init(key: "name", value: "Living Room", line: 2), .init(key: "audio-device", value: "hw:0", line: 3),
                .init(key: "port", value: "7100", line: 5),
            ])
    }

    func testWindowsLineEndings() throws {
        XCTAssertEqual(
            try ConfigFile.parse("name = Kitchen\r\nport = 7001\r\n"),
            [.init(key: "name", value: "Kitchen", line: 1), .init(key: "port", value: "7001", line: 2)])
    }

    func testACommentMarkFollowedByACombiningMarkStillStartsAComment() throws {
        // Found by ConfigFileFuzz: "#\u{364}" is one Character, but still a comment.
        XCTAssertEqual(try ConfigFile.parse("name = K#\u{364}x"), [.init(key: "name", value: "K", line: 1)])
    }

    func testMalformedLinesNameTheLine() {
        XCTAssertThrowsError(try ConfigFile.parse("name = a\njust words\n")) { error in
            XCTAssertEqual((error as? ConfigFile.Error)?.message, "line 2: expected 'key = value', found 'just words'")
        }
        XCTAssertThrowsError(try ConfigFile.parse(" = value")) { error in
            XCTAssertEqual((error as? ConfigFile.Error)?.message, "line 1: '' is not a setting name")
        }
    }

    func testOversizedFileIsRefused() {
        XCTAssertThrowsError(try ConfigFile.parse(String(repeating: "#", count: ConfigFile.maximumSize + 1)))
    }
}
