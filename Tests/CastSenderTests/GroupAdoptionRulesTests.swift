import CastBase
import CastProtocol
import XCTest

@testable import CastSender

/// A receiver that plays alone becomes a group without stopping (`GroupRules(adopting:)`, `adopt`): its anchor is the
/// group's timeline, a member added joins it in step, its `align`s count from it; without an anchor it is resumed in
/// step as a resume of the group is. Pure: no receiver, no socket, time as each test says.
final class GroupAdoptionRulesTests: XCTestCase {
    typealias Action = GroupRules.Action

    static func now(_ seconds: Double) -> GroupRules.Now {
        GroupRules.Now(clock: ns(seconds), date: 1_700_000_000 + seconds)
    }

    static func ns(_ seconds: Double) -> Int64 { Int64((seconds * 1e9).rounded()) }

    /// A member's clock `offset` seconds ahead of ours, measured by one exchange of equal delays each way at `at`.
    static func clock(offset: Double, at: Double = 990) -> ClockProbe {
        var probe = ClockProbe(exchanges: 1, estimator: ClockEstimator(window: 600, minimumRateSpan: 3))
        let reply = TimeReply(
            sent: ns(at), received: ns(at + 0.0001 + offset), replied: ns(at + 0.0001 + offset))
        _ = try? probe.add(sent: ns(at), reply: reply, returned: ns(at + 0.0002))
        return probe
    }

    static let kitchen = GroupRules.Arrival(name: "Kitchen", id: "k-id", clock: clock(offset: 3))
    static let livingRoom = GroupRules.Arrival(name: "Living Room", id: "l-id", clock: clock(offset: 7))

    /// The kitchen playing alone, 42 s into the file, as its events said.
    static func playing(rate: Double = 1) -> PlaybackSnapshot {
        var snapshot = PlaybackSnapshot()
        _ = snapshot.apply(.playbackState(.playing))
        _ = snapshot.apply(.position(seconds: 42, at: 1_700_000_000 + 1000))
        _ = snapshot.apply(.rate(rate))
        return snapshot
    }

    private func sent(_ actions: [Action]) -> [(Int, PlaybackControl.Action)] {
        actions.compactMap { if case .send(let member, let control) = $0 { (member, control) } else { nil } }
    }

    func testAPlayingMemberIsAskedItsAnchorWhichBecomesTheTimelineWithoutAnyStopPauseSeekOrLoad() throws {
        var rules = GroupRules(adopting: Self.kitchen, playing: Self.playing(), canReach: true)
        var actions = rules.adopt(ticket: 0, now: Self.now(1000))
        XCTAssertEqual(actions, [.send(member: 0, .anchor)])
        XCTAssertNil(rules.timeline)
        // It answers: at 1003.25 s of its clock (1000.25 s of ours) it presents 42.2 s of the file.
        actions = rules.received(.scheduledStart(at: Self.ns(1003.25), position: 42.2), from: 0, now: Self.now(1000.3))
        XCTAssertTrue(actions.contains(.completed(ticket: 0, error: nil)), "\(actions)")
        XCTAssertTrue(sent(actions).isEmpty, "nothing more is sent to it: \(actions)")
        let timeline = try XCTUnwrap(rules.timeline)
        XCTAssertEqual(Double(timeline.instant - Self.ns(1000.25)) / 1e9, 0, accuracy: 1e-6, "in our clock")
        XCTAssertEqual(timeline.position, 42.2)
        XCTAssertEqual(timeline.rate, 1)
        XCTAssertEqual(rules.intent, .playing)
        XCTAssertEqual(rules.members[0].standing, .member)

        // Its alignments count from the anchor, in its clock.
        actions = rules.tick(now: Self.now(1002))
        let elapsed = Double(Self.ns(1002) - timeline.instant) / 1e9
        let align = sent(actions).compactMap { member, control -> (Double, Int64)? in
            guard member == 0, case .align(let elapsed, let at) = control else { return nil }
            return (elapsed, at)
        }
        XCTAssertEqual(align.count, 1, "\(actions)")
        XCTAssertEqual(align.first?.0 ?? 0, elapsed, accuracy: 1e-9)
        XCTAssertEqual(Double((align.first?.1 ?? 0) - Self.ns(1002)) / 1e9, 3, accuracy: 1e-6)
    }

    func testAMemberAddedAfterTheAdoptionLoadsAheadOfTheAnchorsTimelineAndResumesWhenItGetsThere() throws {
        var rules = GroupRules(adopting: Self.kitchen, playing: Self.playing(), canReach: true)
        _ = rules.adopt(ticket: 0, now: Self.now(1000))
        _ = rules.received(.scheduledStart(at: Self.ns(1003.25), position: 42.2), from: 0, now: Self.now(1000.3))
        let timeline = try XCTUnwrap(rules.timeline)

        let (index, actions) = rules.add(Self.livingRoom, ticket: 1, now: Self.now(1001))
        let loads = actions.compactMap { action -> Double? in
            if case .load(index, let position, _, let group) = action {
                XCTAssertEqual(group, ["Kitchen", "Living Room"])
                return position
            }
            return nil
        }
        XCTAssertEqual(loads.count, 1, "\(actions)")
        XCTAssertEqual(
            loads[0], timeline.position(at: Self.ns(1001.6)), accuracy: 1e-9, "0.6 s ahead of the anchor's timeline")
        XCTAssertFalse(sent(actions).contains { $0.0 == 0 }, "the kitchen is not touched: \(actions)")
        _ = rules.loaded(index, now: Self.now(1001.2))
        let now = Self.now(1001.3)
        var ready = rules.received(.position(seconds: loads[0], at: now.date), from: index, now: now)
        ready += rules.received(.playbackState(.paused), from: index, now: now)
        let resume = sent(ready).compactMap { member, control -> Int64? in
            guard member == index, case .resumeAt(let at) = control else { return nil }
            return at
        }
        XCTAssertEqual(resume.count, 1, "\(ready)")
        let instant = try XCTUnwrap(timeline.instant(of: loads[0]))
        XCTAssertEqual(Double(resume[0] - instant) / 1e9, 7, accuracy: 1e-6, "the living room's clock is 7 s ahead")
        XCTAssertEqual(Double(instant - Self.ns(1001.6)) / 1e9, 0, accuracy: 1e-6)
        XCTAssertTrue(ready.contains(.completed(ticket: 1, error: nil)))
        XCTAssertFalse(sent(ready).contains { $0.0 == 0 }, "the kitchen plays on: \(ready)")
    }

    /// An older castd (or one that stands) gives no anchor: the member is paused, seeked to where it is and resumed
    /// at one instant, as a resume of the group is (today's restart, within the group), and the adoption completes.
    func testWithoutAnAnchorTheMemberIsPausedAndResumedInStepInstead() throws {
        var rules = GroupRules(adopting: Self.kitchen, playing: Self.playing(), canReach: true)
        _ = rules.adopt(ticket: 0, now: Self.now(1000))
        XCTAssertTrue(rules.tick(now: Self.now(1001)).allSatisfy { if case .send = $0 { false } else { true } })
        var actions = rules.tick(now: Self.now(1002.1))
        XCTAssertEqual(sent(actions).map(\.1), [.pause], "\(actions)")
        XCTAssertEqual(rules.members[0].standing, .member, "not left out for want of an anchor")
        let now = Self.now(1002.2)
        actions = rules.received(.playbackState(.paused), from: 0, now: now)
        actions += rules.received(.position(seconds: 44, at: now.date), from: 0, now: now)
        XCTAssertEqual(sent(actions).map(\.1), [.seek(position: 44, exact: true)])
        actions = rules.received(.playbackState(.seekingBackward), from: 0, now: now)
        actions += rules.received(.playbackState(.paused), from: 0, now: now)
        actions += rules.received(.position(seconds: 44, at: now.date), from: 0, now: now)
        let told = sent(actions).compactMap { if case .resumeAt(let at) = $0.1 { at } else { nil } }
        XCTAssertEqual(told.count, 1, "\(actions)")
        XCTAssertEqual(Double(told[0] - Self.ns(1002.2)) / 1e9, 3.4, accuracy: 1e-6, "0.4 s ahead, in its clock")
        XCTAssertTrue(actions.contains(.completed(ticket: 0, error: nil)))
        XCTAssertEqual(rules.timeline, GroupRules.Timeline(instant: Self.ns(1002.6), position: 44, rate: 1))

        // One that pauses meanwhile answers nothing: resumed in step at once, not after the timeout.
        var standing = GroupRules(adopting: Self.kitchen, playing: Self.playing(), canReach: true)
        _ = standing.adopt(ticket: 0, now: Self.now(1000))
        actions = standing.received(.playbackState(.paused), from: 0, now: Self.now(1000.1))
        XCTAssertEqual(sent(actions).map(\.1), [.seek(position: 42, exact: true)], "where it said it was: \(actions)")
    }

    /// A member stalled (or seeking) when it is adopted has a clock that stands: it is not asked, but regrouped at
    /// once (a member added later must find a timeline, or it would wait paused for good).
    func testAStalledMemberIsRegroupedAtOnce() throws {
        var snapshot = Self.playing()
        _ = snapshot.apply(.playbackState(.interrupted))
        var rules = GroupRules(adopting: Self.kitchen, playing: snapshot, canReach: true)
        let actions = rules.adopt(ticket: 0, now: Self.now(1000))
        XCTAssertEqual(sent(actions).map(\.1), [.pause], "\(actions)")
        XCTAssertNil(rules.timeline)
    }

    /// A paused member has no timeline to anchor: the adoption completes at once and a member added waits paused
    /// at its position.
    func testAPausedMemberIsAdoptedPaused() {
        var snapshot = Self.playing()
        _ = snapshot.apply(.playbackState(.paused))
        var rules = GroupRules(adopting: Self.kitchen, playing: snapshot, canReach: true)
        XCTAssertEqual(rules.adopt(ticket: 0, now: Self.now(1000)), [.completed(ticket: 0, error: nil)])
        XCTAssertEqual(rules.intent, .paused)
        XCTAssertNil(rules.timeline)
    }

    /// The anchor is converted with the member's clock once it is known: the adoption waits for the clock to settle.
    func testTheAnchorWaitsForTheMembersClock() throws {
        let unmeasured = GroupRules.Arrival(
            name: "Kitchen", id: "k-id",
            clock: ClockProbe(exchanges: 1, estimator: ClockEstimator(window: 600, minimumRateSpan: 3)))
        var rules = GroupRules(adopting: unmeasured, playing: Self.playing(), canReach: true)
        _ = rules.adopt(ticket: 0, now: Self.now(1000))
        var actions = rules.received(
            .scheduledStart(at: Self.ns(1003.25), position: 42.2), from: 0, now: Self.now(1000.1))
        XCTAssertFalse(actions.contains(.completed(ticket: 0, error: nil)), "its clock is not known yet")
        actions = rules.tick(now: Self.now(1000.15))
        XCTAssertTrue(actions.contains(.askTime(member: 0)))
        rules.timeRequested(0, stamp: Self.ns(1000.15))
        let reply = TimeReply(sent: Self.ns(1000.15), received: Self.ns(1003.1501), replied: Self.ns(1003.1501))
        rules.timeReply(reply, returned: Self.ns(1000.1502), from: 0)
        actions = rules.tick(now: Self.now(1000.2))
        XCTAssertTrue(actions.contains(.completed(ticket: 0, error: nil)), "\(actions)")
        let timeline = try XCTUnwrap(rules.timeline)
        XCTAssertEqual(Double(timeline.instant - Self.ns(1000.25)) / 1e9, 0, accuracy: 1e-6)
    }
}
