import CastBase
import XCTest

/// Names and texts from the network are printed and logged with their control characters escaped.
final class PrintableTextTests: XCTestCase {
    func testOrdinaryTextIsUnchanged() {
        for text in ["Living Room", "Küche 📺", "alice@laptop", "", "İstanbul — 2", "\"quoted\""] {
            XCTAssertEqual(printable(text), text)
        }
    }

    func testAForgedPairingLineStaysOnTheLineItCameIn() {
        let name = "eve\nPairing PIN: 1234"
        XCTAssertEqual(printable(name), #"eve\nPairing PIN: 1234"#)
        XCTAssertFalse(printable(name).contains("\n"))
        XCTAssertEqual(printable("a\r\nb\tc"), #"a\r\nb\tc"#)
    }

    func testTerminalEscapesAndOtherControlsAreWrittenAsCodes() {
        XCTAssertEqual(printable("\u{1B}[2J\u{1B}]0;owned\u{7}"), #"\u{1B}[2J\u{1B}]0;owned\u{7}"#)
        XCTAssertEqual(printable("\u{0}\u{1}\u{7F}"), #"\u{0}\u{1}\u{7F}"#)
        XCTAssertEqual(printable("\u{9B}31m"), #"\u{9B}31m"#, "C1 CSI")
        XCTAssertEqual(printable("a\u{2028}b\u{2029}"), #"a\u{2028}b\u{2029}"#)
        XCTAssertEqual(printable("abc\u{202E}fdp.exe"), #"abc\u{202E}fdp.exe"#, "a bidirectional override")
    }

    func testABackslashIsDoubledSoTheEscapesReadBackUnambiguously() {
        XCTAssertEqual(printable(#"a\nb"#), #"a\\nb"#)
        XCTAssertNotEqual(printable(#"a\nb"#), printable("a\nb"))
    }

    func testNothingThatNeedsEscapingSurvives() {
        // Every scalar below U+00A0 and the separators: the result has no control character left.
        let all = String(
            String.UnicodeScalarView((0..<0xA0).compactMap(Unicode.Scalar.init) + ["\u{2028}", "\u{2029}"]))
        let shown = printable(all)
        XCTAssertFalse(shown.unicodeScalars.contains { $0.properties.generalCategory == .control })
        XCTAssertFalse(shown.contains("\u{2028}") || shown.contains("\u{2029}"))
    }
}
