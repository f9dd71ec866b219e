import XCTest

@testable import CastReceiver

/// The receiver's session rules, driven without sockets, threads or a clock: take-over, the media connection's
/// deadline, the sender's silence, and what a finish frees.
final class SessionRulesTests: XCTestCase {
    typealias Rules = SessionRules<String, String>
    let limits = Rules.Limits(mediaConnection: .seconds(10), senderSilence: .seconds(10))

    func testAnotherSenderTakesOverUnderAllowAndIsRefusedUnderDeny() {
        var allow = Rules(policy: .allow, limits: limits)
        XCTAssertEqual(
            allow.request("s1", by: "alice", needsMedia: true, watchesSender: true, now: .zero),
            .start(interrupting: nil))
        XCTAssertEqual(
            allow.request("s2", by: "bob", needsMedia: true, watchesSender: true, now: .seconds(1)),
            .start(interrupting: "s1"))
        XCTAssertEqual(allow.current?.token, "s2")

        var deny = Rules(policy: .deny, limits: limits)
        _ = deny.request("s1", by: "alice", needsMedia: true, watchesSender: true, now: .zero)
        XCTAssertEqual(
            deny.request("s2", by: "bob", needsMedia: true, watchesSender: true, now: .seconds(1)),
            .refuse(busyWith: "s1"))
        XCTAssertEqual(deny.current?.token, "s1", "the session plays on")
        // The same sender may replace its own session (the next file of a queue).
        XCTAssertEqual(
            deny.request("s3", by: "alice", needsMedia: true, watchesSender: true, now: .seconds(2)),
            .start(interrupting: "s1"))
        // Once it finished, anyone may play.
        deny.finished("s3")
        XCTAssertNil(deny.current)
        XCTAssertEqual(
            deny.request("s4", by: "bob", needsMedia: true, watchesSender: true, now: .seconds(3)),
            .start(interrupting: nil))
        // A finish of a session that was replaced frees nothing.
        deny.finished("s3")
        XCTAssertEqual(deny.current?.token, "s4")
    }

    func testTheMediaConnectionMustArriveInTime() {
        var rules = Rules(policy: .allow, limits: limits)
        _ = rules.request("s1", by: "alice", needsMedia: true, watchesSender: false, now: .seconds(100))
        XCTAssertNil(rules.check(now: .seconds(109), senderSilence: nil))
        XCTAssertEqual(
            rules.nextCheck(now: .seconds(101)), .seconds(110), "asked again at the deadline")
        let verdict = rules.check(now: .seconds(110), senderSilence: nil)
        XCTAssertEqual(verdict?.token, "s1")
        XCTAssertEqual(verdict?.ending, .mediaConnectionMissing(.seconds(10)))
        XCTAssertEqual(
            verdict?.ending.message, "the media connection did not arrive within 10.0 seconds")

        // Arrived in time: no deadline any more.
        var served = Rules(policy: .allow, limits: limits)
        _ = served.request("s1", by: "alice", needsMedia: true, watchesSender: false, now: .zero)
        served.mediaArrived("s1")
        XCTAssertNil(served.check(now: .seconds(60), senderSilence: nil))
        XCTAssertNil(served.nextCheck(now: .seconds(60)), "nothing left to watch")
        // A URL the receiver opens itself waits for no connection.
        var url = Rules(policy: .allow, limits: limits)
        _ = url.request("s1", by: "alice", needsMedia: false, watchesSender: false, now: .zero)
        XCTAssertNil(url.check(now: .seconds(60), senderSilence: nil))
        // The media of a session that was replaced changes nothing for the new one.
        _ = served.request("s2", by: "bob", needsMedia: true, watchesSender: false, now: .seconds(61))
        served.mediaArrived("s1")
        XCTAssertEqual(
            served.check(now: .seconds(71), senderSilence: nil)?.ending,
            .mediaConnectionMissing(.seconds(10)))
    }

    func testASilentSenderIsLostButAnAirPlayClientIsNotWatched() {
        var rules = Rules(policy: .allow, limits: limits)
        _ = rules.request("s1", by: "alice", needsMedia: false, watchesSender: true, now: .zero)
        XCTAssertNil(
            rules.check(now: .seconds(30), senderSilence: .seconds(10)), "10 s is still within the limit")
        XCTAssertEqual(
            rules.check(now: .seconds(30), senderSilence: .milliseconds(10_001))?.ending,
            .senderLost(.seconds(10)))
        XCTAssertEqual(
            rules.nextCheck(now: .seconds(30)), .seconds(31), "silence is looked at every second")

        var airPlay = Rules(policy: .allow, limits: limits)
        _ = airPlay.request("a1", by: "client", needsMedia: false, watchesSender: false, now: .zero)
        XCTAssertNil(airPlay.check(now: .seconds(300), senderSilence: .seconds(300)))
        XCTAssertNil(airPlay.nextCheck(now: .seconds(300)))
    }

    func testTheMediaDeadlineComesBeforeTheSilence() {
        var rules = Rules(policy: .allow, limits: limits)
        _ = rules.request("s1", by: "alice", needsMedia: true, watchesSender: true, now: .zero)
        XCTAssertEqual(rules.nextCheck(now: .seconds(9.5)), .seconds(10))
        XCTAssertEqual(
            rules.check(now: .seconds(12), senderSilence: .seconds(12))?.ending,
            .mediaConnectionMissing(.seconds(10)))
    }
}
