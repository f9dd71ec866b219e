import CastProtocol
import XCTest

@testable import CastKit

/// CastKit's route rules, driven without a receiver, a socket or a clock: moves between here and a receiver, a
/// receiver that refuses, a connection that breaks and is retried until its window closes, and what ends a retry.
final class RouteRulesTests: XCTestCase {
    typealias Rules = RouteRules<TestRoute>

    /// A movie loaded here and the selection set to "tv".
    private func playingHere() -> Rules {
        var rules = Rules()
        rules.started(on: nil)
        return rules
    }

    /// A movie playing on "tv".
    private func playingOnTheTV() -> Rules {
        var rules = Rules()
        rules.started(on: "tv")
        return rules
    }

    func testAMovieMovesToTheSelectedReceiverAndBackAndNothingMovesWhenNoneIsLoaded() {
        var rules = playingHere()
        XCTAssertEqual(rules.selectionChanged(candidate: "tv"), .start(on: "tv", pinnedID: nil))
        rules.started(on: "tv")
        XCTAssertEqual(rules.moveIfNeeded(candidate: "tv"), .none, "already there")
        XCTAssertEqual(rules.selectionChanged(candidate: nil), .start(on: nil, pinnedID: nil), "back here")
        rules.started(on: nil)
        XCTAssertEqual(rules.selectionChanged(candidate: "radio"), .start(on: "radio", pinnedID: nil))

        rules.unloaded()
        XCTAssertEqual(rules.selectionChanged(candidate: "tv"), .none, "no movie is loaded: the next load goes there")
        XCTAssertEqual(rules.wanted(candidate: "tv"), "tv")
    }

    func testAReceiverThatRefusesIsLostUntilTheSelectionChanges() {
        var rules = playingOnTheTV()
        XCTAssertEqual(rules.routeLost(candidate: "tv", now: .zero), .start(on: nil, pinnedID: nil))
        XCTAssertEqual(rules.lost, "tv")
        XCTAssertNil(rules.reconnection, "a refusal is not retried")
        rules.started(on: nil)
        XCTAssertEqual(rules.wanted(candidate: "tv"), nil, "the failed receiver is not chosen again")
        XCTAssertEqual(rules.moveIfNeeded(candidate: "tv"), .none)
        // Another receiver is fine; selecting (or allowing) again forgets the failure.
        XCTAssertEqual(rules.wanted(candidate: "radio"), "radio")
        XCTAssertEqual(rules.selectionChanged(candidate: "tv"), .start(on: "tv", pinnedID: nil))
        XCTAssertNil(rules.lost)
    }

    func testABrokenConnectionIsRetriedEveryIntervalUntilTheWindowClosesThenPlaysHere() {
        var rules = playingOnTheTV()
        let broke = Duration.seconds(100)
        XCTAssertEqual(
            rules.connectionBroken(receiverID: "key", retries: true, candidate: "tv", now: broke),
            .interruptAndReconnect(on: "tv", pinnedID: "key"))
        XCTAssertEqual(rules.reconnection?.deadline, broke + .seconds(5))
        var attempts = 1
        var now = broke
        while true {
            rules.started(on: "tv", reconnecting: true)
            // Each attempt fails at once (castd is still down): connection refused.
            now += .milliseconds(20)
            let step = rules.routeLost(candidate: "tv", now: now)
            guard case .retry(let at) = step else {
                XCTAssertEqual(step, .start(on: nil, pinnedID: nil), "after the window: here")
                break
            }
            XCTAssertEqual(at, now + .milliseconds(500), "the next attempt after the interval")
            now = at
            XCTAssertEqual(rules.retryDue(), .start(on: "tv", pinnedID: "key"), "the same receiver, the same key")
            attempts += 1
        }
        // At 100.00, 100.52, 101.04, ... 104.68: the attempt whose next would fall after 105 s is the last.
        XCTAssertEqual(attempts, 10)
        XCTAssertLessThan(now, broke + .seconds(5))
        XCTAssertNil(rules.reconnection)
        XCTAssertEqual(rules.lost, "tv", "given up: the receiver is not chosen again until the selection changes")
        XCTAssertEqual(rules.retryDue(), .none, "a timer armed before is void")
    }

    func testAReconnectionEndsWhenItsClockRunsAndALaterBreakHasAWindowOfItsOwn() {
        var rules = playingOnTheTV()
        _ = rules.connectionBroken(receiverID: "key", retries: true, candidate: "tv", now: .seconds(10))
        rules.started(on: "tv", reconnecting: true)
        rules.clockStarted()
        XCTAssertNil(rules.reconnection, "reconnected")
        XCTAssertNil(rules.lost)
        XCTAssertEqual(
            rules.connectionBroken(receiverID: "key", retries: true, candidate: "tv", now: .seconds(60)),
            .interruptAndReconnect(on: "tv", pinnedID: "key"))
        XCTAssertEqual(rules.reconnection?.deadline, .seconds(65))
    }

    func testABreakBeforeTheReconnectedClockRanIsAFailedAttempt() {
        var rules = playingOnTheTV()
        _ = rules.connectionBroken(receiverID: "key", retries: true, candidate: "tv", now: .zero)
        rules.started(on: "tv", reconnecting: true)
        // The new session accepted the movie, then broke before playing: it waits its turn, the window unchanged.
        XCTAssertEqual(
            rules.connectionBroken(receiverID: "key", retries: true, candidate: "tv", now: .seconds(1)),
            .retry(at: .milliseconds(1500)))
        XCTAssertEqual(rules.reconnection?.deadline, .seconds(5))
    }

    func testEnginePlayersAndRoutesWithoutAKeyComeHereAtOnce() {
        var music = playingOnTheTV()
        XCTAssertEqual(
            music.connectionBroken(receiverID: "key", retries: false, candidate: "tv", now: .zero),
            .start(on: nil, pinnedID: nil), "an audio or music player does not retry")
        XCTAssertEqual(music.lost, "tv")

        var speaker = playingOnTheTV()
        XCTAssertEqual(
            speaker.connectionBroken(receiverID: nil, retries: true, candidate: "tv", now: .zero),
            .start(on: nil, pinnedID: nil), "no key to insist on")

        var local = playingHere()
        XCTAssertEqual(
            local.connectionBroken(receiverID: "key", retries: true, candidate: nil, now: .zero), .none,
            "a local playback has no connection to retry")
        XCTAssertNil(local.lost)
    }

    func testAMoveANewMovieOrAnUnloadEndsAReconnection() {
        for end in ["move", "load", "unload"] {
            var rules = playingOnTheTV()
            _ = rules.connectionBroken(receiverID: "key", retries: true, candidate: "tv", now: .zero)
            switch end {
            case "move":
                // The user picked another receiver while the retries ran.
                XCTAssertEqual(rules.selectionChanged(candidate: "radio"), .start(on: "radio", pinnedID: nil))
                rules.started(on: "radio")
            case "load": rules.started(on: "tv")
            default: rules.unloaded()
            }
            XCTAssertNil(rules.reconnection, end)
            XCTAssertEqual(rules.retryDue(), .none, "\(end): a retry armed before does nothing")
        }
    }

    func testAPolicyOfItsOwn() {
        var rules = Rules(policy: .init(interval: .seconds(1), window: .seconds(2)))
        rules.started(on: "tv")
        _ = rules.connectionBroken(receiverID: "key", retries: true, candidate: "tv", now: .zero)
        rules.started(on: "tv", reconnecting: true)
        XCTAssertEqual(rules.routeLost(candidate: "tv", now: .zero), .retry(at: .seconds(1)))
        rules.started(on: "tv", reconnecting: true)
        XCTAssertEqual(rules.routeLost(candidate: "tv", now: .seconds(1)), .start(on: nil, pinnedID: nil))
    }

    // MARK: Groups

    /// A movie playing on the group "kitchen+living".
    private func playingOnAGroup() -> Rules {
        var rules = Rules()
        rules.started(on: "kitchen+living")
        return rules
    }

    func testAGroupTakesANewSelectionOfReceiversInPlace() {
        var rules = playingOnAGroup()
        XCTAssertTrue(rules.grouped)
        XCTAssertEqual(rules.selectionChanged(candidate: "kitchen+living+study"), .regroup(on: "kitchen+living+study"))
        rules.regrouped(on: "kitchen+living+study")
        XCTAssertEqual(rules.moveIfNeeded(candidate: "kitchen+living+study"), .none, "already there")
        XCTAssertEqual(rules.selectionChanged(candidate: "living+study"), .regroup(on: "living+study"), "one leaves")
        rules.regrouped(on: "living+study")
        // Down to one receiver it is still a group: the next one selected joins it.
        XCTAssertEqual(rules.selectionChanged(candidate: "study"), .regroup(on: "study"))
        rules.regrouped(on: "study")
        XCTAssertTrue(rules.grouped)
        XCTAssertEqual(rules.selectionChanged(candidate: "study+kitchen"), .regroup(on: "study+kitchen"))
    }

    func testOneReceiverWithoutTheAnchorBecomesAGroupByAMoveAndAGroupLeavesForHereOrASpeakerByAMove() {
        var rules = Rules()
        rules.started(on: "oldtv")
        XCTAssertFalse(rules.grouped)
        XCTAssertEqual(rules.selectionChanged(candidate: "oldtv+kitchen"), .start(on: "oldtv+kitchen", pinnedID: nil))

        var here = playingOnAGroup()
        XCTAssertEqual(here.selectionChanged(candidate: nil), .start(on: nil, pinnedID: nil), "deselected: here")
        here.started(on: nil)
        XCTAssertFalse(here.grouped)

        var speaker = playingOnAGroup()
        XCTAssertEqual(
            speaker.selectionChanged(candidate: "speaker patio"), .start(on: "speaker patio", pinnedID: nil),
            "a group cannot take an AirPlay speaker while it plays")
        XCTAssertEqual(
            speaker.selectionChanged(candidate: "kitchen+speaker patio"),
            .start(on: "kitchen+speaker patio", pinnedID: nil))
        speaker.started(on: "kitchen+speaker patio")
        XCTAssertEqual(
            speaker.selectionChanged(candidate: "kitchen+living"), .start(on: "kitchen+living", pinnedID: nil),
            "a group with a speaker does not let it go in place")
    }

    func testOneReceiverPlayingAloneIsAdoptedIntoAGroupThatKeepsItThenRegroupsInPlace() {
        var rules = playingOnTheTV()
        XCTAssertEqual(rules.selectionChanged(candidate: "tv+kitchen"), .adopt(on: "tv+kitchen"))
        XCTAssertEqual(rules.selectionChanged(candidate: "kitchen+tv"), .adopt(on: "kitchen+tv"), "in any order")
        XCTAssertFalse(rules.grouped, "until the player says it was adopted")
        rules.adopted(on: "tv+kitchen")
        XCTAssertTrue(rules.grouped)
        XCTAssertEqual(rules.active, .some("tv+kitchen"))
        XCTAssertEqual(rules.moveIfNeeded(candidate: "tv+kitchen"), .none, "already there")
        XCTAssertEqual(rules.selectionChanged(candidate: "tv+kitchen+study"), .regroup(on: "tv+kitchen+study"))
        XCTAssertEqual(rules.selectionChanged(candidate: "kitchen"), .regroup(on: "kitchen"), "the adopted one leaves")

        // An adoption the player could not carry out is a move: a group started afresh.
        var moved = playingOnTheTV()
        XCTAssertEqual(moved.selectionChanged(candidate: "tv+kitchen"), .adopt(on: "tv+kitchen"))
        moved.started(on: "tv+kitchen")
        XCTAssertTrue(moved.grouped)
        XCTAssertEqual(moved.selectionChanged(candidate: "tv+kitchen+study"), .regroup(on: "tv+kitchen+study"))
    }

    func testWhatPlaysAloneIsNotAdoptedWhenTheRouteDropsItOrCannotBeAGroupOrItLacksTheAnchor() {
        var rules = playingOnTheTV()
        XCTAssertEqual(
            rules.selectionChanged(candidate: "kitchen+living"), .start(on: "kitchen+living", pinnedID: nil),
            "a route that drops the playing receiver")
        XCTAssertEqual(
            rules.selectionChanged(candidate: "tv+speaker patio"), .start(on: "tv+speaker patio", pinnedID: nil),
            "a group cannot take an AirPlay speaker while it plays")
        XCTAssertEqual(rules.selectionChanged(candidate: "kitchen"), .start(on: "kitchen", pinnedID: nil), "alone")

        var old = Rules()
        old.started(on: "oldtv")
        XCTAssertEqual(
            old.selectionChanged(candidate: "oldtv+kitchen"), .start(on: "oldtv+kitchen", pinnedID: nil),
            "a receiver that does not tell its anchor")

        var speaker = Rules()
        speaker.started(on: "speaker patio")
        XCTAssertEqual(
            speaker.selectionChanged(candidate: "speaker patio+kitchen"),
            .start(on: "speaker patio+kitchen", pinnedID: nil), "an AirPlay speaker playing alone")

        var here = playingHere()
        XCTAssertEqual(
            here.selectionChanged(candidate: "tv+kitchen"), .start(on: "tv+kitchen", pinnedID: nil), "here → a group")

        var reconnecting = playingOnTheTV()
        _ = reconnecting.connectionBroken(receiverID: "key", retries: true, candidate: "tv", now: .zero)
        XCTAssertEqual(
            reconnecting.selectionChanged(candidate: "tv+kitchen"), .start(on: "tv+kitchen", pinnedID: nil),
            "nothing plays while the receiver is retried")
    }

    func testAGroupWhoseEveryMemberIsLostPlaysHereAndIsNotTakenBackInPlace() {
        var rules = playingOnAGroup()
        XCTAssertEqual(
            rules.connectionBroken(receiverID: nil, retries: true, candidate: "kitchen+living", now: .zero),
            .start(on: nil, pinnedID: nil), "a group has no one key to insist on")
        XCTAssertEqual(rules.lost, "kitchen+living")
        XCTAssertFalse(rules.grouped)
        rules.started(on: nil)
        XCTAssertEqual(rules.moveIfNeeded(candidate: "kitchen+living"), .none, "not chosen again")
        XCTAssertEqual(
            rules.selectionChanged(candidate: "kitchen+living"), .start(on: "kitchen+living", pinnedID: nil),
            "selected again: a new group")
    }

    func testTheSelectedReceiversAreTheRoute() {
        let tv = ReceiverDescription(name: "TV", id: "", host: "127.0.0.1", port: 1)
        let kitchen = ReceiverDescription(name: "Kitchen", id: "", host: "127.0.0.1", port: 2)
        var patio = ReceiverDescription(name: "Patio", id: "", host: "127.0.0.1", port: 3)
        patio.kind = .speaker
        XCTAssertFalse([tv].isGroup)
        XCTAssertTrue([tv, kitchen].isGroup)
        XCTAssertTrue([tv, kitchen].canJoinGroup)
        XCTAssertFalse([tv, patio].canJoinGroup, "a speaker cannot join a playing group")
        XCTAssertFalse([ReceiverDescription]().canJoinGroup)
        XCTAssertFalse([tv].canBeAdopted, "named by address: its features are not known")
        var discovered = tv
        discovered.record = ServiceRecord(id: "1", friendlyName: "TV", features: [.audio, .anchor], auth: .none)
        XCTAssertTrue([discovered].canBeAdopted)
        discovered.record?.features = [.audio, .video]
        XCTAssertFalse([discovered].canBeAdopted, "a receiver that does not tell its anchor")
        XCTAssertFalse([discovered, kitchen].canBeAdopted, "a group is not adopted")
        XCTAssertTrue([kitchen, tv].keeps([tv]))
        XCTAssertFalse([kitchen].keeps([tv]))
    }
}

/// A route of the tests: receivers' names joined by "+" ("tv", "kitchen+living"), a group when several; a name that
/// begins with "speaker" is an AirPlay speaker, one that begins with "old" a Cast receiver without the anchor.
struct TestRoute: GroupableRoute, ExpressibleByStringLiteral, CustomStringConvertible {
    let names: [String]

    init(stringLiteral value: String) { names = value.split(separator: "+").map(String.init) }

    var isGroup: Bool { names.count > 1 }
    var canJoinGroup: Bool { !names.isEmpty && !names.contains { $0.hasPrefix("speaker") } }
    /// One receiver that is not a speaker, nor "old" (a receiver that does not tell its anchor).
    var canBeAdopted: Bool { names.count == 1 && canJoinGroup && !names[0].hasPrefix("old") }
    func keeps(_ other: TestRoute) -> Bool { other.names.allSatisfy(names.contains) }
    var description: String { names.joined(separator: "+") }
}
