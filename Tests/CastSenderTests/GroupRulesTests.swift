import CastBase
import CastProtocol
import XCTest

@testable import CastSender

/// The group's rules, driven without a receiver, a socket or a clock: a start in step, pause, resume and seek in
/// step, a member lost and rejoining, a late member, a member that refuses, a change made from another terminal, and
/// the alignments that correct drift. Time is what each test says it is.
final class GroupRulesTests: XCTestCase {
    typealias Action = GroupRules.Action

    private enum Fixtures {
        /// Our clock at `seconds` (and the wall clock, for positions).
        static func now(_ seconds: Double) -> GroupRules.Now {
            GroupRules.Now(clock: Int64((seconds * 1e9).rounded()), date: 1_700_000_000 + seconds)
        }

        /// A member's clock `offset` seconds ahead of ours, measured by one exchange of equal delays each way.
        static func clock(offset: Double) -> ClockProbe {
            var probe = ClockProbe(exchanges: 1, estimator: ClockEstimator(window: 600, minimumRateSpan: 3))
            let sent = 990.0
            let reply = TimeReply(
                sent: ns(sent), received: ns(sent + 0.0001 + offset), replied: ns(sent + 0.0001 + offset))
            _ = try? probe.add(sent: ns(sent), reply: reply, returned: ns(sent + 0.0002))
            return probe
        }

        static func ns(_ seconds: Double) -> Int64 { Int64((seconds * 1e9).rounded()) }

        static let kitchen = GroupRules.Arrival(name: "Kitchen", id: "k-id", clock: clock(offset: 3))
        static let livingRoom = GroupRules.Arrival(name: "Living Room", id: "l-id", clock: clock(offset: 7))
        static let study = GroupRules.Arrival(name: "Study", id: "s-id", clock: clock(offset: 11))
        static let speakerLead: Int64 = 2_500_000_000
        static let speakerResumeLead: Int64 = 500_000_000
        static let speaker = GroupRules.Arrival(
            name: "Patio Speaker", id: nil, clock: nil, startLead: speakerLead, resumeLead: speakerResumeLead,
            isSpeaker: true)

        static let lost = CastError(.connectionLost, "the connection broke")
    }

    /// The `resumeAt` instants sent, by member.
    private func resumes(_ actions: [Action]) -> [Int: Int64] {
        var found: [Int: Int64] = [:]
        for case .send(let member, .resumeAt(let instant)) in actions { found[member] = instant }
        return found
    }

    /// The members each control was sent to, in order.
    private func sent(_ control: PlaybackControl.Action, in actions: [Action]) -> [Int] {
        actions.compactMap { action in
            guard case .send(let member, let sent) = action, sent == control else { return nil }
            return member
        }
    }

    /// `member` pauses at `position` as a member reports it: its state, then where it is.
    private func pausedAt(
        _ position: Double, member: Int, _ rules: inout GroupRules, at seconds: Double
    ) -> [Action] {
        let now = Fixtures.now(seconds)
        return rules.received(.playbackState(.paused), from: member, now: now)
            + rules.received(.position(seconds: position, at: now.date), from: member, now: now)
    }

    /// A joining `member` loaded paused at `position`, which it reported on the way.
    private func loadedAt(_ position: Double, member: Int, _ rules: inout GroupRules, at seconds: Double) -> [Action] {
        let now = Fixtures.now(seconds)
        return rules.received(.position(seconds: position, at: now.date), from: member, now: now)
            + rules.received(.playbackState(.paused), from: member, now: now)
    }

    /// `member` seeks while paused and lands on `position`.
    private func seekedTo(_ position: Double, member: Int, _ rules: inout GroupRules, at seconds: Double) -> [Action] {
        let now = Fixtures.now(seconds)
        return rules.received(.playbackState(.seekingForward), from: member, now: now)
            + pausedAt(position, member: member, &rules, at: seconds)
    }

    /// Two receivers (3 s and 7 s ahead of us) started at 1000 s and playing from 0.
    private func playingGroup() -> GroupRules {
        var rules = GroupRules(members: [Fixtures.kitchen, Fixtures.livingRoom], canReach: true)
        _ = rules.start(autoplay: true, ticket: 0, now: Fixtures.now(1000))
        _ = pausedAt(0, member: 0, &rules, at: 1000.1)
        _ = pausedAt(0, member: 1, &rules, at: 1000.2)
        for member in 0..<2 { _ = rules.received(.playbackState(.playing), from: member, now: Fixtures.now(1000.6)) }
        return rules
    }

    func testEveryMemberStartsAtOneInstantInItsOwnClockOnceAllAreReadyFarEnoughAheadForTheSpeaker() {
        var rules = GroupRules(
            members: [Fixtures.kitchen, Fixtures.livingRoom, Fixtures.speaker], canReach: true)
        XCTAssertEqual(rules.start(autoplay: true, ticket: 0, now: Fixtures.now(1000)), [])
        var actions = pausedAt(5, member: 0, &rules, at: 1000.1)
        XCTAssertEqual(actions.first, .deliver(.playbackState(.paused)), "the leader's events are the group's")
        actions += pausedAt(5, member: 2, &rules, at: 1000.2)
        XCTAssertTrue(resumes(actions).isEmpty, "nothing starts before every member is ready")
        actions = pausedAt(5, member: 1, &rules, at: 1000.3)
        let instant = Fixtures.ns(1000.3) + Fixtures.speakerLead
        let told = resumes(actions)
        XCTAssertEqual(Set(told.keys), [0, 1, 2])
        XCTAssertEqual(Double(told[0]! - instant) / 1e9, 3, accuracy: 1e-6, "the kitchen's clock is 3 s ahead")
        XCTAssertEqual(Double(told[1]! - instant) / 1e9, 7, accuracy: 1e-6)
        XCTAssertEqual(told[2], instant, "a speaker keeps our clock")
        XCTAssertEqual(actions.last, .completed(ticket: 0, error: nil))
        XCTAssertEqual(rules.intent, .playing)
        XCTAssertEqual(rules.timeline, GroupRules.Timeline(instant: instant, position: 5, rate: 1))
    }

    /// A member whose clock is known only within milliseconds (its one exchange held 4 ms on the way back, as on
    /// Wi-Fi) holds the start until more exchanges pin it (`GroupTiming.clockSettled`: 2 s of them here), not longer;
    /// and never past the ready deadline.
    func testTheStartWaitsForAClockKnownOnlyWithinMillisecondsUntilItsExchangesSpanTwoSeconds() {
        func clock(offset: Double, back: Double) -> ClockProbe {
            var probe = ClockProbe(exchanges: 1, estimator: ClockEstimator(window: 600, minimumRateSpan: 3))
            let reply = TimeReply(
                sent: Fixtures.ns(1000), received: Fixtures.ns(1000.0001 + offset),
                replied: Fixtures.ns(1000.0001 + offset))
            _ = try? probe.add(sent: Fixtures.ns(1000), reply: reply, returned: Fixtures.ns(1000.0001 + back))
            return probe
        }
        let jittery = GroupRules.Arrival(name: "Living Room", id: "l-id", clock: clock(offset: 7, back: 0.004))
        var rules = GroupRules(members: [Fixtures.kitchen, jittery], canReach: true)
        _ = rules.start(autoplay: true, ticket: 0, now: Fixtures.now(1000))
        var actions = pausedAt(0, member: 0, &rules, at: 1000.1) + pausedAt(0, member: 1, &rules, at: 1000.2)
        XCTAssertTrue(resumes(actions).isEmpty, "started on a clock known within 2 ms")
        var started: Double?
        for step in 1...40 where started == nil {
            let at = 1000.2 + Double(step) * 0.1
            _ = rules.timeRequested(1, stamp: Fixtures.ns(at))
            let reply = TimeReply(
                sent: Fixtures.ns(at), received: Fixtures.ns(at + 7.0001), replied: Fixtures.ns(at + 7.0001))
            _ = rules.timeReply(reply, returned: Fixtures.ns(at + 0.004), from: 1)
            actions = rules.tick(now: Fixtures.now(at + 0.005))
            if !resumes(actions).isEmpty { started = at }
        }
        let span = started.map { $0 + 0.004 - 1000 }
        XCTAssertNotNil(started, "never started")
        XCTAssertGreaterThanOrEqual(span ?? 0, GroupTiming.startSpan - 0.2, "started before the exchanges spanned 2 s")

        // However unsure a clock stays, the start waits no longer than the ready deadline.
        var stuck = GroupRules(members: [Fixtures.kitchen, jittery], canReach: true)
        _ = stuck.start(autoplay: true, ticket: 0, now: Fixtures.now(1000))
        _ = pausedAt(0, member: 0, &stuck, at: 1000.1) + pausedAt(0, member: 1, &stuck, at: 1000.2)
        XCTAssertTrue(resumes(stuck.tick(now: Fixtures.now(1029))).isEmpty)
        XCTAssertEqual(Set(resumes(stuck.tick(now: Fixtures.now(1031))).keys), [0, 1], "held past the deadline")
    }

    /// While a start waits for a member's clock, each member's time is asked twenty times a second (as often as castd
    /// answers: twice the exchanges by the time the start is scheduled); once it plays, ten times a second.
    func testTimeIsAskedTwiceAsOftenWhileTheStartWaitsForAClock() {
        var probe = ClockProbe(exchanges: 1, estimator: ClockEstimator(window: 600, minimumRateSpan: 3))
        let reply = TimeReply(
            sent: Fixtures.ns(1000), received: Fixtures.ns(1007.0001), replied: Fixtures.ns(1007.0001))
        _ = try? probe.add(sent: Fixtures.ns(1000), reply: reply, returned: Fixtures.ns(1000.004))
        let jittery = GroupRules.Arrival(name: "Living Room", id: "l-id", clock: probe)
        var rules = GroupRules(members: [Fixtures.kitchen, jittery], canReach: true)
        _ = rules.start(autoplay: true, ticket: 0, now: Fixtures.now(1000))
        _ = pausedAt(0, member: 0, &rules, at: 1000.1) + pausedAt(0, member: 1, &rules, at: 1000.2)
        /// The requests asked at each tick of a second, 50 ms apart, each answered before the next tick.
        func asked(from start: Double) -> Int {
            (0..<20).reduce(0) { count, step in
                let at = start + Double(step) * 0.05
                let asks = rules.tick(now: Fixtures.now(at)).filter { if case .askTime = $0 { true } else { false } }
                for case .askTime(let index) in asks { rules.timeRequested(index, stamp: nil) }
                return count + asks.count
            }
        }
        XCTAssertTrue(rules.clocksUnsettled)
        XCTAssertEqual(asked(from: 1000.25), 40, "two members, twenty a second while the start waits")
        let started = rules.tick(now: Fixtures.now(1031))
        XCTAssertEqual(resumes(started).count, 2, "started at the ready deadline")
        for case .askTime(let index) in started { rules.timeRequested(index, stamp: nil) }
        XCTAssertEqual(asked(from: 1031.05), 20, "two members, ten a second once it plays")
    }

    func testWithoutAutoplayTheGroupWaitsPausedAndTheFirstResumeStartsItInStep() throws {
        var rules = GroupRules(members: [Fixtures.kitchen, Fixtures.livingRoom], canReach: true)
        _ = rules.start(autoplay: false, ticket: 0, now: Fixtures.now(1000))
        _ = pausedAt(0, member: 0, &rules, at: 1000.1)
        XCTAssertEqual(pausedAt(0, member: 1, &rules, at: 1000.1).last, .completed(ticket: 0, error: nil))
        var actions = try rules.control(.resume, ticket: 1, now: Fixtures.now(1001))
        XCTAssertEqual(sent(.seek(position: 0, exact: true), in: actions), [0, 1], "all to one place first")
        actions = seekedTo(0, member: 0, &rules, at: 1001.1) + seekedTo(0, member: 1, &rules, at: 1001.2)
        XCTAssertEqual(Set(resumes(actions).keys), [0, 1])
        XCTAssertEqual(actions.last, .completed(ticket: 1, error: nil))
    }

    func testPauseSeekAndResumeActOnEveryMemberInStep() throws {
        var rules = playingGroup()
        var actions = try rules.control(.pause, ticket: 1, now: Fixtures.now(1010))
        XCTAssertEqual(sent(.pause, in: actions), [0, 1], "a pause acts at once on every member")
        XCTAssertEqual(actions.last, .completed(ticket: 1, error: nil))
        _ = pausedAt(9.6, member: 0, &rules, at: 1010.1)
        _ = pausedAt(9.61, member: 1, &rules, at: 1010.1)

        // Paused, a seek takes every member to one place and leaves them paused.
        actions = try rules.control(.seek(position: 20, exact: false), ticket: 2, now: Fixtures.now(1011))
        XCTAssertEqual(sent(.seek(position: 20, exact: true), in: actions), [0, 1])
        XCTAssertFalse(actions.contains(.completed(ticket: 2, error: nil)), "done once every member is there")
        actions = seekedTo(20, member: 0, &rules, at: 1011.1)
        XCTAssertFalse(actions.contains(.completed(ticket: 2, error: nil)))
        actions = seekedTo(20, member: 1, &rules, at: 1011.2)
        XCTAssertEqual(actions.last, .completed(ticket: 2, error: nil))
        XCTAssertTrue(resumes(actions).isEmpty, "a paused group stays paused")

        // A resume meets at the leader's place and starts everyone at one instant.
        actions = try rules.control(.resume, ticket: 3, now: Fixtures.now(1012))
        XCTAssertEqual(sent(.seek(position: 20, exact: true), in: actions), [0, 1])
        actions = seekedTo(20, member: 0, &rules, at: 1012.1) + seekedTo(20, member: 1, &rules, at: 1012.1)
        let instant = Fixtures.ns(1012.1) + GroupRules.Timing().startMargin
        XCTAssertEqual(Double(resumes(actions)[0]! - instant) / 1e9, 3, accuracy: 1e-6)
        XCTAssertEqual(Double(resumes(actions)[1]! - instant) / 1e9, 7, accuracy: 1e-6)
        XCTAssertEqual(rules.timeline?.position, 20)

        // Playing, a seek pauses everyone, meets at the place and starts again.
        for member in 0..<2 { _ = rules.received(.playbackState(.playing), from: member, now: Fixtures.now(1013)) }
        actions = try rules.control(.seek(position: 40, exact: true), ticket: 4, now: Fixtures.now(1014))
        XCTAssertEqual(sent(.pause, in: actions), [0, 1])
        XCTAssertTrue(sent(.seek(position: 40, exact: true), in: actions).isEmpty, "not before they are paused")
        actions = pausedAt(21.5, member: 0, &rules, at: 1014.1) + pausedAt(21.5, member: 1, &rules, at: 1014.1)
        XCTAssertEqual(sent(.seek(position: 40, exact: true), in: actions), [0, 1])
        actions = seekedTo(40, member: 0, &rules, at: 1014.2) + seekedTo(40, member: 1, &rules, at: 1014.2)
        XCTAssertEqual(Set(resumes(actions).keys), [0, 1])
        XCTAssertEqual(actions.last, .completed(ticket: 4, error: nil))
    }

    /// A speaker's first start after its set-up is told its long lead ahead (its latency); a resume after that only
    /// its resume lead, so that the group comes back about as fast as one without a speaker.
    func testASpeakerNeedsItsLongLeadForItsFirstStartOnlyNotForAResume() throws {
        var rules = GroupRules(members: [Fixtures.kitchen, Fixtures.speaker], canReach: true)
        _ = rules.start(autoplay: true, ticket: 0, now: Fixtures.now(1000))
        _ = pausedAt(0, member: 1, &rules, at: 1000.1)
        var actions = pausedAt(0, member: 0, &rules, at: 1000.2)
        XCTAssertEqual(resumes(actions)[1], Fixtures.ns(1000.2) + Fixtures.speakerLead, "the first start")
        for member in 0..<2 { _ = rules.received(.playbackState(.playing), from: member, now: Fixtures.now(1003)) }

        _ = try rules.control(.pause, ticket: 1, now: Fixtures.now(1010))
        _ = pausedAt(7.2, member: 0, &rules, at: 1010.1)
        _ = pausedAt(7.2, member: 1, &rules, at: 1010.1)
        _ = try rules.control(.resume, ticket: 2, now: Fixtures.now(1011))
        actions = seekedTo(7.2, member: 0, &rules, at: 1011.1) + seekedTo(7.2, member: 1, &rules, at: 1011.1)
        let instant = Fixtures.ns(1011.1) + Fixtures.speakerResumeLead
        XCTAssertEqual(resumes(actions)[1], instant, "a resume: the speaker's resume lead, not its latency")
        XCTAssertEqual(Double(try XCTUnwrap(resumes(actions)[0]) - instant) / 1e9, 3, accuracy: 1e-6)
    }

    /// An AirPlay speaker named with `--to` and not reached at the start joins a playing group as a receiver does, but
    /// loads as far ahead as its first start needs (its latency), and is started only that far ahead; found again, it
    /// is in the group already; one a request from the wire names is refused (it would be fed the file).
    func testASpeakerJoinsAPlayingGroupFarEnoughAheadForItsLatency() throws {
        var rules = playingGroup()
        let timeline = try XCTUnwrap(rules.timeline)
        rules.lookFor(absent: ["Patio"], now: Fixtures.now(1010))
        XCTAssertTrue(rules.tick(now: Fixtures.now(1010)).contains(.lookFor("Patio")))
        let (index, found) = rules.found("Patio", Fixtures.speaker, now: Fixtures.now(1010.5))
        let position = timeline.position(at: Fixtures.ns(1010.5) + Fixtures.speakerLead + Fixtures.ns(0.6))
        XCTAssertEqual(
            found,
            [.load(member: index, position: position, volume: nil, group: ["Kitchen", "Living Room", "Patio Speaker"])])
        _ = rules.loaded(index, now: Fixtures.now(1010.8))
        let actions = loadedAt(position, member: index, &rules, at: 1010.9)
        let instant = try XCTUnwrap(resumes(actions)[index])
        XCTAssertEqual(instant, try XCTUnwrap(timeline.instant(of: position)), "it starts where the group will be")
        XCTAssertGreaterThan(instant - Fixtures.ns(1010.9), Fixtures.speakerLead, "far enough ahead for its latency")
        XCTAssertTrue(actions.contains(.announce(.joined("Patio Speaker"))))
        XCTAssertEqual(rules.activeMembers, [0, 1, index])

        rules.lookFor(absent: ["Patio again"], now: Fixtures.now(1012))
        _ = rules.tick(now: Fixtures.now(1012))
        let (again, twice) = rules.found("Patio again", Fixtures.speaker, now: Fixtures.now(1012.1))
        XCTAssertEqual(twice, [.close(member: again)], "in the group already")

        var porch = Fixtures.speaker
        porch.name = "Porch"
        _ = rules.received(.joinRequest(receiver: "Porch"), from: 0, now: Fixtures.now(1013))
        let (refused, said) = rules.found("Porch", porch, now: Fixtures.now(1013.1))
        XCTAssertEqual(
            said,
            [
                .close(member: refused),
                .announce(.notAdded("Porch", why: "an AirPlay speaker joins only when named with --to")),
            ])
        XCTAssertEqual(rules.activeMembers, [0, 1, index])
    }

    /// An AirPlay speaker that drops off (Wi-Fi) is looked for again by the words the user named it with, and
    /// rejoins as far ahead as its latency needs; a speaker the group cannot name is not looked for.
    func testALostSpeakerIsLookedForByItsNameAndRejoins() throws {
        var patio = Fixtures.speaker
        patio.lookedForAs = "Patio"
        var rules = GroupRules(members: [Fixtures.kitchen, patio, Fixtures.speaker], canReach: true)
        _ = rules.start(autoplay: true, ticket: 0, now: Fixtures.now(1000))
        for member in 0..<3 { _ = pausedAt(0, member: member, &rules, at: 1000.1) }
        for member in 0..<3 { _ = rules.received(.playbackState(.playing), from: member, now: Fixtures.now(1003)) }
        let timeline = try XCTUnwrap(rules.timeline)

        _ = rules.lost(2, error: Fixtures.lost, now: Fixtures.now(1009))
        XCTAssertEqual(rules.lookouts, [], "a speaker with no name to look for it by is not looked for")
        let actions = rules.lost(1, error: Fixtures.lost, now: Fixtures.now(1010))
        XCTAssertEqual(actions, [.announce(.left("Patio Speaker", why: "lost: the connection broke"))])
        XCTAssertTrue(rules.tick(now: Fixtures.now(1011)).contains(.lookFor("Patio")), "by the name it was given")
        XCTAssertEqual(rules.notFound("Patio", error: Fixtures.lost, now: Fixtures.now(1012)), [], "not back yet")
        XCTAssertTrue(rules.tick(now: Fixtures.now(1013)).contains(.lookFor("Patio")), "looked for again")

        let (index, found) = rules.found("Patio", patio, now: Fixtures.now(1013.5))
        let position = timeline.position(at: Fixtures.ns(1013.5) + Fixtures.speakerLead + Fixtures.ns(0.6))
        XCTAssertEqual(
            found, [.load(member: index, position: position, volume: nil, group: ["Kitchen", "Patio Speaker"])])
        _ = rules.loaded(index, now: Fixtures.now(1013.8))
        let joined = loadedAt(position, member: index, &rules, at: 1013.9)
        XCTAssertEqual(try XCTUnwrap(resumes(joined)[index]), try XCTUnwrap(timeline.instant(of: position)))
        XCTAssertTrue(joined.contains(.announce(.rejoined("Patio Speaker"))))
        XCTAssertEqual(rules.activeMembers, [0, index])
        XCTAssertEqual(rules.lookouts, [])
    }

    func testControlsAreCarriedOutOneAtATimeInOrder() throws {
        var rules = GroupRules(members: [Fixtures.kitchen, Fixtures.livingRoom], canReach: true)
        _ = rules.start(autoplay: true, ticket: 0, now: Fixtures.now(1000))
        XCTAssertEqual(try rules.control(.pause, ticket: 1, now: Fixtures.now(1000.05)), [], "it waits for the start")
        _ = pausedAt(0, member: 0, &rules, at: 1000.1)
        let actions = pausedAt(0, member: 1, &rules, at: 1000.1)
        let start = try XCTUnwrap(actions.firstIndex(of: .completed(ticket: 0, error: nil)))
        let pause = try XCTUnwrap(actions.firstIndex(of: .completed(ticket: 1, error: nil)))
        XCTAssertLessThan(start, pause)
        XCTAssertEqual(sent(.pause, in: actions), [0, 1])
    }

    func testAChangeMadeOnOneMemberFromAnotherTerminalIsFollowedByTheWholeGroup() throws {
        var rules = playingGroup()
        // `cast pause "living room"`: it pauses on its own; the group pauses every member.
        var actions = rules.received(.playbackState(.paused), from: 1, now: Fixtures.now(1005))
        XCTAssertEqual(sent(.pause, in: actions), [0, 1])
        XCTAssertFalse(actions.contains(.deliver(.playbackState(.paused))), "not the leader: its events are its own")
        XCTAssertEqual(rules.intent, .paused)
        _ = pausedAt(4.4, member: 0, &rules, at: 1005.1)
        _ = pausedAt(4.4, member: 1, &rules, at: 1005.1)
        XCTAssertNil(rules.running)

        // `cast resume "living room"`: the group takes it back in step.
        actions = rules.received(.playbackState(.playing), from: 1, now: Fixtures.now(1006))
        XCTAssertEqual(sent(.pause, in: actions), [1], "the one that resumed pauses to meet the others")
        actions = pausedAt(4.5, member: 1, &rules, at: 1006.1)
        XCTAssertEqual(sent(.seek(position: 4.4, exact: true), in: actions), [0, 1], "at the leader's place")
        actions = seekedTo(4.4, member: 0, &rules, at: 1006.2) + seekedTo(4.4, member: 1, &rules, at: 1006.2)
        XCTAssertEqual(Set(resumes(actions).keys), [0, 1])

        // `cast seek kitchen 9`: the group goes where the member went once it says where it landed.
        for member in 0..<2 { _ = rules.received(.playbackState(.playing), from: member, now: Fixtures.now(1007)) }
        actions = rules.received(.playbackState(.seekingForward), from: 0, now: Fixtures.now(1008))
        XCTAssertTrue(sent(.pause, in: actions).isEmpty, "its place is not known yet")
        actions = rules.received(
            .position(seconds: 9, at: Fixtures.now(1008.1).date), from: 0, now: Fixtures.now(1008.1))
        XCTAssertEqual(sent(.pause, in: actions), [0, 1])
        actions = pausedAt(9, member: 0, &rules, at: 1008.2) + pausedAt(5.5, member: 1, &rules, at: 1008.2)
        XCTAssertEqual(sent(.seek(position: 9, exact: true), in: actions), [0, 1])
    }

    func testAMemberLostLeavesTheOthersPlayingAndRejoinsInStepWhenFound() throws {
        var rules = playingGroup()
        let timeline = try XCTUnwrap(rules.timeline)
        var actions = rules.lost(1, error: Fixtures.lost, now: Fixtures.now(1010))
        XCTAssertEqual(actions, [.announce(.left("Living Room", why: "lost: the connection broke"))])
        XCTAssertEqual(rules.activeMembers, [0])
        XCTAssertFalse(rules.tick(now: Fixtures.now(1010.5)).contains(.lookFor("l-id")), "looked for a second later")
        actions = rules.tick(now: Fixtures.now(1011))
        XCTAssertTrue(actions.contains(.lookFor("l-id")), "by its id")
        XCTAssertFalse(rules.tick(now: Fixtures.now(1011.1)).contains(.lookFor("l-id")), "one attempt at a time")
        actions = rules.notFound("l-id", error: Fixtures.lost, now: Fixtures.now(1011.2))
        XCTAssertEqual(actions, [], "a lost member is looked for whatever it answers")
        XCTAssertTrue(rules.tick(now: Fixtures.now(1012.2)).contains(.lookFor("l-id")))

        // Found: it loads where the group will be 0.6 s later, then starts when the group gets to where it is.
        let (index, found) = rules.found("l-id", Fixtures.livingRoom, now: Fixtures.now(1012.5))
        XCTAssertEqual(index, 2)
        let position = timeline.position(at: Fixtures.ns(1013.1))
        XCTAssertEqual(found, [.load(member: 2, position: position, volume: nil, group: ["Kitchen", "Living Room"])])
        XCTAssertEqual(rules.loaded(2, now: Fixtures.now(1012.6)), [])
        actions = loadedAt(position, member: 2, &rules, at: 1012.7)
        let instant = try XCTUnwrap(timeline.instant(of: position))
        XCTAssertEqual(Double(try XCTUnwrap(resumes(actions)[2]) - instant) / 1e9, 7, accuracy: 1e-6)
        XCTAssertTrue(actions.contains(.announce(.rejoined("Living Room"))))
        XCTAssertEqual(rules.lookouts, [])
        XCTAssertEqual(rules.activeMembers, [0, 2])
    }

    func testALateJoiningMemberSeeksFurtherAheadAndIsLeftOutAfterItsAttempts() throws {
        var rules = playingGroup()
        let timeline = try XCTUnwrap(rules.timeline)
        _ = rules.received(.joinRequest(receiver: "Study"), from: 0, now: Fixtures.now(1020))
        let (index, _) = rules.found("Study", Fixtures.study, now: Fixtures.now(1020))
        _ = rules.loaded(index, now: Fixtures.now(1020.5))
        // It took too long: where it is paused, the group will be in 0.1 s.
        var actions = loadedAt(timeline.position(at: Fixtures.ns(1021.6)), member: index, &rules, at: 1021.5)
        XCTAssertTrue(resumes(actions).isEmpty)
        let ahead = timeline.position(at: Fixtures.ns(1021.5 + 1.2))
        XCTAssertEqual(sent(.seek(position: ahead, exact: true), in: actions), [index], "twice the lead ahead")
        actions = seekedTo(ahead, member: index, &rules, at: 1022)
        XCTAssertEqual(
            Double(try XCTUnwrap(resumes(actions)[index]) - timeline.instant(of: ahead)!) / 1e9, 11, accuracy: 1e-6)
        XCTAssertTrue(actions.contains(.announce(.joined("Study"))))

        // One that never catches up is stopped after its attempts.
        var slow = playingGroup()
        let (late, _) = slow.add(Fixtures.study, ticket: 7, now: Fixtures.now(1030))
        _ = slow.loaded(late, now: Fixtures.now(1030))
        actions = pausedAt(0, member: late, &slow, at: 1030.5)
        for attempt in 2...3 {
            let seek = try XCTUnwrap(
                actions.compactMap { action -> Double? in
                    guard case .send(late, .seek(let position, _)) = action else { return nil }
                    return position
                }.first, "attempt \(attempt)")
            actions = seekedTo(seek - 5, member: late, &slow, at: 1031 + Double(attempt))
        }
        XCTAssertEqual(sent(.stop, in: actions), [late])
        XCTAssertEqual(
            actions.last, .completed(ticket: 7, error: CastError(.playback, "Study could not catch up with the group")))
    }

    func testAMemberThatRefusesOrIsNotReadyIsLeftOutAndTheOthersGoOn() throws {
        // A receiver asked for by a member refuses the media: not added, said once.
        var rules = playingGroup()
        XCTAssertEqual(
            rules.received(.joinRequest(receiver: "Study"), from: 1, now: Fixtures.now(1020)), [.lookFor("Study")])
        XCTAssertEqual(rules.received(.joinRequest(receiver: "study"), from: 0, now: Fixtures.now(1020)), [], "once")
        let (index, _) = rules.found("Study", Fixtures.study, now: Fixtures.now(1020.1))
        let refusal = CastError(.busy, "Study plays for another sender")
        let actions = rules.loadFailed(index, error: refusal, now: Fixtures.now(1020.3))
        XCTAssertEqual(actions, [.close(member: index), .announce(.notAdded("Study", why: refusal.message))])
        XCTAssertEqual(rules.activeMembers, [0, 1])
        XCTAssertNil(rules.running)

        // Asked for twice under two names: in the group already.
        _ = rules.requestJoin("Kitchen Alias", now: Fixtures.now(1021))
        XCTAssertEqual(
            rules.found("Kitchen Alias", Fixtures.kitchen, now: Fixtures.now(1021)).actions,
            [.close(member: 3), .announce(.notAdded("Kitchen Alias", why: "it is in the group already"))])

        // An address read from the wire is never reached (nobody advertised or paired it): refused at once.
        for address in ["10.0.0.5:7100", "[fe80::1]:7100", "attacker.example:443"] {
            XCTAssertEqual(
                rules.received(.joinRequest(receiver: address), from: 0, now: Fixtures.now(1022)),
                [.announce(.notAdded(address, why: "an address from the wire is not followed"))], address)
        }

        // A group that cannot reach receivers refuses at once.
        var unreachable = GroupRules(members: [Fixtures.kitchen], canReach: false)
        XCTAssertEqual(
            unreachable.received(.joinRequest(receiver: "Study"), from: 0, now: Fixtures.now(1)),
            [.announce(.notAdded("Study", why: "this group cannot reach receivers"))])

        // At the start, a member not ready within the timeout is stopped; the others start.
        var start = GroupRules(members: [Fixtures.kitchen, Fixtures.livingRoom], canReach: true)
        _ = start.start(autoplay: true, ticket: 0, now: Fixtures.now(1000))
        _ = pausedAt(0, member: 0, &start, at: 1000.1)
        XCTAssertTrue(resumes(start.tick(now: Fixtures.now(1029.9))).isEmpty)
        let late = start.tick(now: Fixtures.now(1030.1))
        XCTAssertEqual(sent(.stop, in: late), [1])
        XCTAssertTrue(late.contains(.announce(.left("Living Room", why: "not ready within 30 s"))))
        XCTAssertEqual(Set(resumes(late).keys), [0])
        XCTAssertTrue(late.contains(.completed(ticket: 0, error: nil)))
    }

    func testAJoiningMemberLoadingPastTheDeadlineIsLeftOutAndStoppedWhenItLoadsAtLast() {
        var rules = playingGroup()
        let (index, _) = rules.add(Fixtures.study, ticket: 5, now: Fixtures.now(1020))
        let late = rules.tick(now: Fixtures.now(1050.1))
        XCTAssertTrue(late.contains(.announce(.left("Study", why: "not ready within 30 s"))))
        XCTAssertTrue(late.contains(.completed(ticket: 5, error: CastError(.playback, "Study was not ready in time"))))
        XCTAssertEqual(
            rules.loaded(index, now: Fixtures.now(1051)), [.send(member: index, .stop), .close(member: index)],
            "it must not play on alone")
        XCTAssertEqual(rules.activeMembers, [0, 1])
    }

    func testAnAbsentReceiverIsGivenUpWhenItRefusesUsForGood() {
        var rules = playingGroup()
        rules.lookFor(absent: ["Garage"], now: Fixtures.now(1010))
        XCTAssertTrue(rules.tick(now: Fixtures.now(1010)).contains(.lookFor("Garage")))
        XCTAssertEqual(
            rules.notFound("Garage", error: CastError(.noSuchReceiver, "not in sight"), now: Fixtures.now(1010)), [])
        XCTAssertTrue(rules.tick(now: Fixtures.now(1011)).contains(.lookFor("Garage")), "not in sight yet: again")
        let refusal = CastError(.notAuthorised, "Garage needs pairing")
        XCTAssertEqual(
            rules.notFound("Garage", error: refusal, now: Fixtures.now(1011)),
            [.announce(.notAdded("Garage", why: refusal.message))])
        XCTAssertEqual(rules.lookouts, [])
    }

    func testAlignmentsOnceASecondInEachMembersClockCorrectDriftButNeverDuringAControl() throws {
        var rules = GroupRules(members: [Fixtures.kitchen, Fixtures.speaker], canReach: true)
        _ = rules.start(autoplay: true, ticket: 0, now: Fixtures.now(1000))
        _ = pausedAt(0, member: 0, &rules, at: 1000)
        _ = pausedAt(0, member: 1, &rules, at: 1000)
        let anchor = Fixtures.ns(1000) + Fixtures.speakerLead
        // Before the start instant there is nothing to align.
        var actions = rules.tick(now: Fixtures.now(1001))
        XCTAssertEqual(actions.filter { if case .send(_, .align) = $0 { true } else { false } }, [])
        XCTAssertEqual(
            actions.filter { if case .askTime = $0 { true } else { false } }, [.askTime(member: 0)], "not the speaker")
        XCTAssertFalse(rules.tick(now: Fixtures.now(1001.1)).contains(.askTime(member: 0)), "one request in flight")
        rules.timeRequested(0, stamp: Fixtures.ns(1001.1))
        XCTAssertTrue(rules.tick(now: Fixtures.now(1001.2)).contains(.askTime(member: 0)))

        actions = rules.tick(now: Fixtures.now(1005))
        let at = Fixtures.ns(1005)
        let elapsed = Double(at - anchor) / 1e9
        let theirs = try XCTUnwrap(rules.theirInstant(at, member: 0))
        XCTAssertEqual(Double(theirs - at) / 1e9, 3, accuracy: 1e-6)
        XCTAssertTrue(actions.contains(.send(member: 0, .align(elapsed: elapsed, at: theirs))))
        XCTAssertEqual(sent(.align(elapsed: elapsed, at: theirs), in: actions), [0], "a speaker keeps our clock")
        XCTAssertFalse(
            rules.tick(now: Fixtures.now(1005.5)).contains { if case .send(_, .align) = $0 { true } else { false } },
            "once a second")
        // A control under way: no alignment belongs to a timeline being changed.
        _ = try rules.control(.seek(position: 10, exact: true), ticket: 1, now: Fixtures.now(1006))
        XCTAssertFalse(
            rules.tick(now: Fixtures.now(1007)).contains { if case .send(_, .align) = $0 { true } else { false } })
    }

    func testATimeReplyIsTakenWhetherItComesBeforeOrAfterItsRequestsStamp() {
        var rules = GroupRules(members: [Fixtures.kitchen], canReach: true)
        _ = rules.tick(now: Fixtures.now(1000))
        let stamp = Fixtures.ns(1000)
        let reply = TimeReply(sent: stamp, received: Fixtures.ns(1003.0001), replied: Fixtures.ns(1003.0001))
        // The reader saw the reply before the sender reported the stamp.
        rules.timeReply(reply, returned: Fixtures.ns(1000.0002), from: 0)
        XCTAssertNotNil(rules.members[0].earlyReply)
        rules.timeRequested(0, stamp: stamp)
        XCTAssertNil(rules.members[0].earlyReply)
        XCTAssertNil(rules.members[0].pendingTimeRequest)
        // In the usual order; a stray reply (another request's) is dropped.
        _ = rules.tick(now: Fixtures.now(1001))
        rules.timeRequested(0, stamp: Fixtures.ns(1001))
        rules.timeReply(TimeReply(sent: 5, received: 6, replied: 7), returned: Fixtures.ns(1001.1), from: 0)
        XCTAssertEqual(rules.members[0].pendingTimeRequest, Fixtures.ns(1001))
        XCTAssertNil(rules.members[0].earlyReply)
    }

    func testTheGroupEndsWithItsLastMemberAndAMemberFinishingEarlyLeaves() throws {
        var rules = playingGroup()
        let failed = PlaybackEvent.finished(reason: .playbackError, error: "decoder failed")
        XCTAssertEqual(
            rules.received(failed, from: 0, now: Fixtures.now(1010)),
            [.announce(.left("Kitchen", why: "finished: playbackError (decoder failed)"))])
        XCTAssertEqual(rules.leader, 1, "the next member leads")
        XCTAssertEqual(
            rules.received(.position(seconds: 10, at: 0), from: 1, now: Fixtures.now(1010)),
            [.deliver(.position(seconds: 10, at: 0))])
        let ended = PlaybackEvent.finished(reason: .playbackEnded, error: nil)
        XCTAssertEqual(rules.received(ended, from: 1, now: Fixtures.now(1030)), [.end(.success(ended))])
        XCTAssertEqual(rules.tick(now: Fixtures.now(1031)), [])

        // The last member lost: the group's error.
        var lost = playingGroup()
        _ = lost.lost(0, error: Fixtures.lost, now: Fixtures.now(1010))
        XCTAssertEqual(lost.lost(1, error: Fixtures.lost, now: Fixtures.now(1011)), [.end(.failure(Fixtures.lost))])
    }

    /// A queue's next file goes on with the members that played this one to the end (or were stopped by a skip), not
    /// one that failed or was lost, and with the receivers still looked for, once each.
    func testWhatGoesOnToAQueuesNextFileIsTheMembersThatPlayedToTheEndAndThoseStillLookedFor() {
        var rules = GroupRules(
            members: [Fixtures.kitchen, Fixtures.livingRoom, Fixtures.study], canReach: true)
        _ = rules.start(autoplay: true, ticket: 0, now: Fixtures.now(1000))
        for member in 0..<3 { _ = pausedAt(0, member: member, &rules, at: 1000.1) }
        rules.lookFor(absent: ["Patio"], now: Fixtures.now(1000.2))
        _ = rules.lost(1, error: Fixtures.lost, now: Fixtures.now(1005))
        let ended = PlaybackEvent.finished(reason: .playbackEnded, error: nil)
        _ = rules.received(.finished(reason: .playbackError, error: "decoder failed"), from: 2, now: Fixtures.now(1009))
        XCTAssertEqual(rules.received(ended, from: 0, now: Fixtures.now(1010)), [.end(.success(ended))])
        XCTAssertEqual(rules.lookouts, [], "nobody is looked for once the group is over")
        let carried = rules.carriedOver
        XCTAssertEqual(
            carried.members, [0], "the kitchen played to the end; the study failed, the living room was lost")
        XCTAssertEqual(carried.lookedFor, ["Patio", "l-id"])

        var skipped = playingGroup()
        _ = try? skipped.control(.stop, ticket: 1, now: Fixtures.now(1003))
        let stopped = PlaybackEvent.finished(reason: .userExited, error: nil)
        _ = skipped.received(stopped, from: 0, now: Fixtures.now(1003.1))
        _ = skipped.received(stopped, from: 1, now: Fixtures.now(1003.2))
        XCTAssertEqual(skipped.carriedOver.members, [0, 1], "stopped for a skip: both go on")
    }

    func testOneMembersVolumeIsItsOwnAndRemovingAMemberStopsIt() throws {
        var rules = playingGroup()
        XCTAssertEqual(try rules.control(.volume(0.25), receiverID: "k-id"), [.send(member: 0, .volume(0.25))])
        XCTAssertThrowsError(try rules.control(.pause, receiverID: "k-id"))
        XCTAssertThrowsError(try rules.control(.volume(1), receiverID: "nobody"))
        XCTAssertEqual(
            try rules.remove(receiverID: "k-id", now: Fixtures.now(1010)),
            [.send(member: 0, .stop), .close(member: 0), .announce(.left("Kitchen", why: "removed"))])
        XCTAssertEqual(rules.leader, 1)
        XCTAssertEqual(rules.received(.finished(reason: .userExited, error: nil), from: 0, now: Fixtures.now(1011)), [])
        XCTAssertThrowsError(try rules.remove(receiverID: "l-id", now: Fixtures.now(1012)), "never empty")
    }

    /// A group that plays at 1.5×: a receiver that joins is set to 1.5× once loaded, before its scheduled start (at
    /// 1× it would drift off the group's timeline by half a second a second); a speaker, which plays at 1× only, is
    /// not added, with the reason.
    func testAMemberJoiningAGroupThatPlaysFasterPlaysAsFast() throws {
        var rules = playingGroup()
        var actions = try rules.control(.rate(1.5), ticket: 1, now: Fixtures.now(1010))
        XCTAssertEqual(sent(.pause, in: actions), [0, 1])
        actions = pausedAt(9.6, member: 0, &rules, at: 1010.1) + pausedAt(9.6, member: 1, &rules, at: 1010.1)
        XCTAssertEqual(sent(.rate(1.5), in: actions), [0, 1])
        for member in 0..<2 { _ = rules.received(.rate(1.5), from: member, now: Fixtures.now(1010.15)) }
        actions = seekedTo(9.6, member: 0, &rules, at: 1010.2) + seekedTo(9.6, member: 1, &rules, at: 1010.2)
        XCTAssertEqual(Set(resumes(actions).keys), [0, 1])
        for member in 0..<2 { _ = rules.received(.playbackState(.playing), from: member, now: Fixtures.now(1010.8)) }
        let timeline = try XCTUnwrap(rules.timeline)
        XCTAssertEqual(timeline.rate, 1.5)

        let (index, found) = rules.add(Fixtures.study, ticket: 2, now: Fixtures.now(1020))
        let position = timeline.position(at: Fixtures.ns(1020.6))
        XCTAssertEqual(
            found, [.load(member: index, position: position, volume: nil, group: ["Kitchen", "Living Room", "Study"])])
        actions = rules.loaded(index, now: Fixtures.now(1020.2))
        XCTAssertEqual(sent(.rate(1.5), in: actions), [index], "set to the group's rate once loaded")
        _ = rules.received(.rate(1.5), from: index, now: Fixtures.now(1020.25))
        actions = loadedAt(position, member: index, &rules, at: 1020.3)
        XCTAssertEqual(resumes(actions)[index].map { $0 - Fixtures.ns(11) }, timeline.instant(of: position))
        XCTAssertEqual(actions.last, .completed(ticket: 2, error: nil))
        XCTAssertEqual(rules.activeMembers, [0, 1, index])

        let (speaker, refused) = rules.add(Fixtures.speaker, ticket: 3, now: Fixtures.now(1021))
        XCTAssertEqual(
            refused,
            [
                .close(member: speaker),
                .completed(
                    ticket: 3,
                    error: CastError(.usage, "an AirPlay speaker plays at normal speed only; the group plays at 1.5×")),
            ])
        XCTAssertEqual(rules.activeMembers, [0, 1, index])
    }

    func testARateOtherThanOneIsRefusedWithASpeaker() {
        var rules = GroupRules(members: [Fixtures.kitchen, Fixtures.speaker], canReach: true)
        XCTAssertThrowsError(try rules.control(.rate(2), ticket: 1, now: Fixtures.now(1))) { error in
            XCTAssertEqual((error as? CastError)?.kind, .usage)
        }
    }
}
