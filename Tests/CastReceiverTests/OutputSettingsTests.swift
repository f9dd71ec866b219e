import CastProtocol
import XCTest

@testable import CastReceiver

/// The receiver's own output settings without a session: what a sender's control changes and where it goes.
final class OutputSettingsTests: XCTestCase {
    /// The volume and mute are the receiver's: each keeps the other, and they hold across controls for the session.
    func testVolumeAndMuteAreTheReceiversAndKeepEachOther() {
        var output = OutputSettings(scaling: .aspectFit)
        XCTAssertEqual(output.level, 1)
        XCTAssertFalse(output.muted)
        XCTAssertEqual(output.take(.volume(0.25)), .volume(level: 0.25, muted: false))
        XCTAssertEqual(output.take(.mute(true)), .volume(level: 0.25, muted: true))
        XCTAssertEqual(output.take(.pause), .session)
        XCTAssertEqual(output.take(.seek(position: 10, exact: false)), .session)
        XCTAssertEqual(output.take(.volume(0.5)), .volume(level: 0.5, muted: true), "a new level keeps the mute")
        XCTAssertEqual(output.take(.mute(false)), .volume(level: 0.5, muted: false))
        XCTAssertEqual(output.level, 0.5)
    }

    /// A scaling goes to the window; it is taken where SIGHUP's is (`Receiver.setScalingMode`), not here.
    func testScalingIsTheWindowsAndIsNotTakenHere() {
        var output = OutputSettings(scaling: .aspectFit)
        XCTAssertEqual(output.take(.scaling(.fill)), .scaling(.fill))
        XCTAssertEqual(output.scaling, .aspectFit)
        output.scaling = .fill
        XCTAssertEqual(output.take(.scaling(.fill)), .scaling(.fill))
        XCTAssertEqual(output.level, 1, "a scaling changes no level")
    }

    /// Everything else is the session's: with no session the receiver refuses it.
    func testEveryOtherControlIsTheSessions() {
        var output = OutputSettings(scaling: .aspectFit)
        let before = output
        for action: PlaybackControl.Action in [
            .pause, .resume, .resumeAt(1), .stop, .rate(1.5), .accessLog, .subtitles("en"), .audio("en"),
        ] {
            XCTAssertEqual(output.take(action), .session, "\(action)")
        }
        XCTAssertEqual(output, before)
    }
}
