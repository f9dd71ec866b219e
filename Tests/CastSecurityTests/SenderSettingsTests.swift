import Foundation
import XCTest

@testable import CastSecurity

final class SenderSettingsTests: XCTestCase {
    func testDefaultAndAliasesRoundTripAndResolve() throws {
        let directory = try Fixtures.temporaryDirectory(self)
        let settings = try SenderSettings.load(directory: directory)
        XCTAssertNil(try settings.resolve(nil))
        XCTAssertEqual(try settings.resolve("Kitchen"), "Kitchen")
        XCTAssertFalse(FileManager.default.fileExists(atPath: settings.path), "no file before the first change")

        try settings.setAlias("TV", to: "Living Room")
        try settings.setDefaultReceiver("tv")
        let reloaded = try SenderSettings.load(directory: directory)
        XCTAssertEqual(try reloaded.aliases(), ["tv": "Living Room"])
        XCTAssertEqual(try reloaded.resolve("Tv"), "Living Room", "aliases are case-insensitive")
        XCTAssertEqual(try reloaded.resolve(nil), "Living Room", "a default may be an alias")
        XCTAssertEqual(try reloaded.resolve("Kitchen"), "Kitchen")
        let mode = try FileManager.default.attributesOfItem(atPath: settings.path)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)

        XCTAssertTrue(try settings.removeAlias("tv"))
        XCTAssertFalse(try settings.removeAlias("tv"))
        try settings.setDefaultReceiver(nil)
        XCTAssertNil(try SenderSettings.load(directory: directory).resolve(nil))
    }

    func testBadAliasesAndFilesAreRefusedAndLeftAlone() throws {
        let directory = try Fixtures.temporaryDirectory(self)
        let settings = try SenderSettings.load(directory: directory)
        for bad in ["", "a:b", "two words", "-x", String(repeating: "a", count: 65), "tab\there"] {
            XCTAssertThrowsError(try settings.setAlias(bad, to: "Kitchen"), bad)
        }
        XCTAssertThrowsError(try settings.setAlias("k", to: ""))
        XCTAssertThrowsError(try settings.setDefaultReceiver("bell\u{7}"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: settings.path), "nothing refused was written")

        let path = directory + "/" + SenderSettings.fileName
        for text in [
            "{not json", #"{"version":2,"aliases":{}}"#, #"{"version":1,"aliases":{"a:b":"x"}}"#,
            #"{"version":1,"aliases":{"UPPER":"x"}}"#, #"{"version":1,"defaultReceiver":""}"#,
        ] {
            unlink(path)
            XCTAssertTrue(
                FileManager.default.createFile(
                    atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]))
            XCTAssertThrowsError(try SenderSettings.load(directory: directory), text)
            XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), text)
        }
    }
}
