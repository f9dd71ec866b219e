import CastCommandLine
import Foundation
import XCTest

/// `cast --json`'s writer against Foundation's `JSONSerialization`, which it replaces in `cast`: the same text for
/// what `cast` prints, and text that reads back as what was written for everything else.
final class JSONTextTests: XCTestCase {
    /// What `cast status --json`, `cast list --json` and the pairing verbs print, and the names a receiver may send.
    let corpus: [[String: Any]] = [
        [
            "name": "Living Room", "id": "e0c45de3b7d4b957fe0119d20eb82388", "state": "playing", "position": 12.5,
            "duration": 3600, "volume": 1.0, "muted": false, "paired": true, "tls": "TLSv1.3",
            "clock": ["offsetSeconds": -0.000012, "roundTripSeconds": 0.00013, "exchanges": 8],
            "tracks": [["index": 0, "kind": "audio", "language": "fra", "selected": true]],
        ],
        ["name": "Kitchen\n\"quoted\" \\ back\tslash/ok \u{1B}[2J \u{7F} \u{08}\u{0C}\u{01}", "group": ["a", "b"]],
        ["name": "Čajovna 東京 🎵 \u{202E}evil", "receivers": [[String: Any]](), "volume": 0.3, "count": -7],
        ["forgot": "e0c45de3", "paired": false, "nothing": [Int]()],
    ]

    func testWritesWhatJSONSerializationWrites() throws {
        for object in corpus {
            let foundation = String(
                decoding: try JSONSerialization.data(
                    withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]),
                as: UTF8.self)
            XCTAssertEqual(json(object), foundation)
        }
    }

    func testReadsBackAsWhatWasWritten() throws {
        let optional: String? = nil
        let object: [String: Any] = [
            "title": optional as Any, "present": Optional("x") as Any, "big": 1e300, "small": 1.5e-7, "nan": Double.nan,
            "ints": [UInt8(7), Int64.min, UInt64.max] as [Any], "nested": ["deeper": ["deepest": [1, 2, 3]]],
        ]
        let text = json(object)
        let read = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
        XCTAssertTrue(read["title"] is NSNull, text)
        XCTAssertEqual(read["present"] as? String, "x")
        XCTAssertEqual(read["big"] as? Double, 1e300)
        XCTAssertEqual(read["small"] as? Double, 1.5e-7)
        XCTAssertTrue(read["nan"] is NSNull, "not finite: null, \(text)")
        XCTAssertEqual(
            (read["ints"] as? [NSNumber])?.map(\.description), ["7", "-9223372036854775808", "18446744073709551615"])
        XCTAssertEqual(
            ((read["nested"] as? [String: Any])?["deeper"] as? [String: Any])?["deepest"] as? [Int], [1, 2, 3], text)
    }
}
