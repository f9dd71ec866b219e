import XCTest

@testable import CastCommandLine

final class ArgumentParserTests: XCTestCase {
    private let specs = [
        OptionSpec("port", value: "N", help: "port"), OptionSpec("json", help: "json"),
        OptionSpec("audio-device", value: "PCM", help: "pcm"),
    ]

    func testOptionsFlagsAndPositionals() throws {
        let parsed = try parseArguments(
            ["status", "--port", "7", "--json", "Living Room", "--audio-device=hw:0", "-"], options: specs)
        XCTAssertEqual(parsed.positionals, ["status", "Living Room", "-"])
        XCTAssertEqual(parsed.options, ["port": "7", "json": "", "audio-device": "hw:0"])
    }

    /// `cast send a.flac --to kitchen --to study`: every value, in order; `options` keeps the last.
    func testRepeatedOptionsKeepEveryValue() throws {
        let parsed = try parseArguments(["--port", "7", "x", "--port=8", "--json", "--port", "9"], options: specs)
        XCTAssertEqual(parsed.values("port"), ["7", "8", "9"])
        XCTAssertEqual(parsed.options["port"], "9")
        XCTAssertEqual(parsed.values("audio-device"), [])
        XCTAssertEqual(parsed.values("json"), [], "a flag has no values")
    }

    func testDoubleDashEndsOptions() throws {
        let parsed = try parseArguments(["--", "--json"], options: specs)
        XCTAssertEqual(parsed.positionals, ["--json"])
        XCTAssertTrue(parsed.options.isEmpty)
    }

    func testNegativeNumbersArePositionals() throws {
        // `cast seek kitchen -10`: a relative seek back, not an option.
        let parsed = try parseArguments(["kitchen", "-10", "-2.5", "--json"], options: specs)
        XCTAssertEqual(parsed.positionals, ["kitchen", "-10", "-2.5"])
        XCTAssertTrue(parsed.has("json"))
        XCTAssertThrowsError(try parseArguments(["-x"], options: specs))
    }

    func testUnknownOptionNamesTheClosestSpelling() {
        XCTAssertThrowsError(try parseArguments(["--prot", "1"], options: specs)) { error in
            XCTAssertEqual((error as? UsageError)?.message, "unknown option '--prot'; did you mean '--port'?")
        }
        XCTAssertThrowsError(try parseArguments(["--zzzzzzzzzz"], options: specs)) { error in
            XCTAssertEqual((error as? UsageError)?.message, "unknown option '--zzzzzzzzzz'")
        }
    }

    func testMissingValueAndValueForFlag() {
        XCTAssertThrowsError(try parseArguments(["--port"], options: specs)) { error in
            XCTAssertEqual((error as? UsageError)?.message, "option '--port' needs a value (N)")
        }
        XCTAssertThrowsError(try parseArguments(["--json=yes"], options: specs)) { error in
            XCTAssertEqual((error as? UsageError)?.message, "option '--json' takes no value")
        }
    }

    func testEditDistance() {
        XCTAssertEqual(editDistance("kitten", "sitting"), 3)
        XCTAssertEqual(editDistance("", "abc"), 3)
        XCTAssertEqual(editDistance("same", "same"), 0)
    }

    func testHelpTableKeepsLongOptionsApartFromTheirHelp() {
        let table = OptionSpec.helpTable(
            [
                OptionSpec("decoder-isolation", value: "MODE", help: "on (default)"),
                OptionSpec("port", value: "N", help: "the port"),
            ],
            minimumColumn: 26)
        XCTAssertEqual(
            table,
            """
              --decoder-isolation MODE  on (default)
              --port N                  the port
            """)
        XCTAssertEqual(OptionSpec.helpTable([OptionSpec("json", help: "lines")]), "  --json            lines")
    }
}
