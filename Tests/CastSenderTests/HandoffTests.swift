import CastProtocol
import XCTest

@testable import CastSender

/// The rules of `cast move` (`Handoff`): which receiver a request from the wire may name, and where the other
/// receiver starts.
final class HandoffTests: XCTestCase {
    /// A name or an id is followed; an address, or what is not a receiver name, is not (a request comes from the wire).
    func testARequestNamesAReceiverNeverAnAddress() {
        XCTAssertNil(Handoff.refusal(of: "Living Room"))
        XCTAssertNil(Handoff.refusal(of: String(repeating: "ab", count: 32)))
        for address in ["10.0.0.5:7100", "[fe80::1]:7100", "attacker.example:443"] {
            XCTAssertEqual(Handoff.refusal(of: address), "an address from the wire is not followed", address)
        }
        XCTAssertEqual(Handoff.refusal(of: ""), "not a receiver name")
        XCTAssertEqual(Handoff.refusal(of: "Stu\u{1B}[2Jdy"), "not a receiver name")
    }

    /// Playing, the position moves on from the last report by the time since (at most `maximumReckoning`); paused,
    /// or with a time that goes back, it is the report.
    func testThePositionIsTheLastReportMovedOnWhilePlaying() {
        XCTAssertEqual(Handoff.position(seconds: 3, at: 100, playing: true, now: 100.4), 3.4, accuracy: 1e-9)
        XCTAssertEqual(Handoff.position(seconds: 3, at: 100, playing: true, rate: 2, now: 100.4), 3.8, accuracy: 1e-9)
        XCTAssertEqual(Handoff.position(seconds: 3, at: 100, playing: false, now: 100.4), 3)
        XCTAssertEqual(Handoff.position(seconds: 3, at: 100, playing: true, now: 99), 3)
        XCTAssertEqual(Handoff.position(seconds: 3, at: 100, playing: true, now: 1e9), 3 + Handoff.maximumReckoning)
        XCTAssertEqual(Handoff.position(seconds: 3, at: .nan, playing: true, now: 100), 3)
        XCTAssertEqual(Handoff.position(seconds: -1, at: 100, playing: false, now: 100), 0)
    }
}
