import CastProtocol
import XCTest

@testable import CastSender

/// The sender's side of a control connection, driven without a socket or a clock: the hello, requests and their
/// replies, a refusal (busy, pairing), a followed session's events and heartbeats, a take-over's finish, and every
/// deadline.
final class SenderConnectionStateMachineTests: XCTestCase {
    typealias Machine = SenderConnectionStateMachine

    private let welcome = Message.welcome(Welcome(name: "Kitchen", id: "abc", auth: "pin"))
    private func ms(_ value: Int) -> Duration { .milliseconds(value) }

    /// A connection that said hello at 0 and was welcomed at 10 ms.
    private func greeted() -> Machine {
        var machine = Machine(helloSentAt: .zero)
        XCTAssertEqual(machine.received(welcome, now: ms(10)), .reply(welcome))
        XCTAssertEqual(machine.phase, .idle)
        return machine
    }

    /// A connection following a session accepted at 100 ms.
    private func following() -> Machine {
        var machine = greeted()
        machine.sending(.play(PlayRequest(title: "clip", url: "http://x/y", startTime: nil)), now: ms(90))
        let accepted = Message.playAccepted(PlayAccepted(session: "s1"))
        XCTAssertEqual(machine.received(accepted, now: ms(100)), .reply(accepted))
        XCTAssertEqual(machine.phase, .following)
        return machine
    }

    func testTheHelloWaitsForTheWelcomeAloneWithinTheReplyLimit() {
        var machine = Machine(helloSentAt: .seconds(7))
        XCTAssertEqual(machine.readTimeout(now: .seconds(8)), .seconds(4))
        XCTAssertEqual(machine.readTimeout(now: .seconds(13)), .zero, "the deadline passed")
        XCTAssertEqual(machine.timedOut(), .timedOut(waitingFor: "welcome", after: .seconds(5)))
        XCTAssertEqual(
            machine.received(.status(ReceiverStatus(name: "Kitchen", id: "abc", state: .stopped)), now: .seconds(8)),
            .fail(.unexpected(.status, waitingFor: "welcome")))
    }

    func testARefusalInPlaceOfAReplyIsTheReceiversWord() {
        var machine = Machine(helloSentAt: .zero)
        let pairing = ErrorMessage(code: .pairingRequired, message: "run cast pair")
        XCTAssertEqual(
            machine.received(.error(pairing), now: ms(5)), .fail(.refused(pairing, waitingFor: "welcome")))

        var busy = greeted()
        busy.sending(.play(PlayRequest(title: "clip", url: "http://x/y", startTime: nil)), now: ms(20))
        let refusal = ErrorMessage(code: .busy, message: "playing for Alice")
        XCTAssertEqual(
            busy.received(.error(refusal), now: ms(30)), .fail(.refused(refusal, waitingFor: "playAccepted")))
    }

    func testAStatusRequestOnAnIdleConnectionWaitsForTheStatusThenIsIdleAgain() {
        var machine = greeted()
        XCTAssertNil(machine.readTimeout(now: ms(20)), "an idle connection waits as long as it takes")
        machine.sending(.statusRequest, now: ms(20))
        XCTAssertEqual(machine.readTimeout(now: ms(1020)), .seconds(4))
        let status = Message.status(ReceiverStatus(name: "Kitchen", id: "abc", state: .stopped))
        XCTAssertEqual(machine.received(status, now: ms(30)), .reply(status))
        XCTAssertEqual(machine.phase, .idle)
        XCTAssertNil(machine.heartbeatDue(), "no heartbeat without a session")
        XCTAssertEqual(
            machine.received(status, now: ms(40)), .fail(.unexpected(.status, waitingFor: "nothing")),
            "nothing is due on an idle connection")
    }

    /// A group's queue plays its next file over the same connection: once the session finished and its follower
    /// handed the connection back, it is idle, and what the old session still had on its way (a heartbeat's status,
    /// a `notPlaying`, a clock exchange's time reply) is skipped, before and while the next play waits for its reply.
    func testAConnectionHandedBackAfterItsSessionSkipsTheSessionsStragglersAndPlaysAgain() {
        var machine = following()
        XCTAssertEqual(
            machine.received(.event(.finished(reason: .playbackEnded, error: nil)), now: ms(200)),
            .event(.finished(reason: .playbackEnded, error: nil)))
        machine.sessionReleased()
        XCTAssertEqual(machine.phase, .idle)
        XCTAssertNil(machine.heartbeatDue(), "no heartbeat once handed back")
        let status = Message.status(ReceiverStatus(name: "Kitchen", id: "abc", state: .stopped))
        let late = Message.timeReply(TimeReply(sent: 1, received: 2, replied: 3))
        let notPlaying = Message.error(ErrorMessage(code: .notPlaying, message: "nothing plays"))
        for straggler in [status, late, notPlaying] {
            XCTAssertEqual(machine.received(straggler, now: ms(210)), .skip, "\(straggler.type)")
        }
        machine.sending(.statusRequest, now: ms(220))
        XCTAssertEqual(machine.received(late, now: ms(225)), .skip, "a time reply is not the status awaited")
        XCTAssertEqual(machine.received(status, now: ms(230)), .reply(status))
        machine.sending(.play(PlayRequest(title: "next", url: "http://x/z", startTime: nil)), now: ms(240))
        XCTAssertEqual(machine.received(status, now: ms(245)), .skip, "a heartbeat's reply that crossed the finish")
        let accepted = Message.playAccepted(PlayAccepted(session: "s2"))
        XCTAssertEqual(machine.received(accepted, now: ms(250)), .reply(accepted))
        XCTAssertEqual(machine.phase, .following)

        var fresh = greeted()
        fresh.sessionReleased()
        XCTAssertEqual(fresh.phase, .idle)
        XCTAssertEqual(
            fresh.received(status, now: ms(40)), .fail(.unexpected(.status, waitingFor: "nothing")),
            "a connection that followed no session skips nothing")
    }

    func testAFollowedSessionDeliversEventsInOrderAndSkipsTheHeartbeatsReplies() {
        var machine = following()
        let events: [PlaybackEvent] = [.playbackState(.playing), .position(seconds: 1, at: 2), .playbackState(.paused)]
        for (index, event) in events.enumerated() {
            XCTAssertEqual(machine.received(.event(event), now: ms(200 + index)), .event(event))
        }
        XCTAssertEqual(machine.heartbeatDue(), ms(2100), "2 s after the acceptance")
        machine.sending(.statusRequest, now: ms(2100))
        XCTAssertEqual(machine.phase, .following, "a heartbeat is not a request that waits")
        XCTAssertEqual(machine.heartbeatDue(), ms(4100))
        XCTAssertEqual(
            machine.received(.status(ReceiverStatus(name: "Kitchen", id: "abc", state: .playing)), now: ms(2110)), .skip
        )
        // A heartbeat that crossed the session's end.
        let notPlaying = ErrorMessage(code: .notPlaying, message: "nothing plays")
        XCTAssertEqual(machine.received(.error(notPlaying), now: ms(2120)), .skip)
        // A group's clock exchange beside the events.
        machine.sending(.timeRequest(TimeRequest(sent: 1)), now: ms(2200))
        let reply = TimeReply(sent: 1, received: 2, replied: 3)
        XCTAssertEqual(machine.received(.timeReply(reply), now: ms(2201)), .timeReply(reply))
        XCTAssertEqual(machine.phase, .following)
    }

    func testATakeOverIsAFinishEventAndAnythingElseOutOfPlaceFails() {
        var machine = following()
        let finish = PlaybackEvent.finished(reason: .playbackError, error: "another sender took the receiver over")
        XCTAssertEqual(machine.received(.event(finish), now: ms(500)), .event(finish))
        XCTAssertEqual(
            machine.received(.playAccepted(PlayAccepted(session: "s2")), now: ms(600)),
            .fail(.unexpected(.playAccepted, waitingFor: "event")))
        let other = ErrorMessage(code: .malformedMessage, message: "no")
        XCTAssertEqual(machine.received(.error(other), now: ms(700)), .fail(.refused(other, waitingFor: "event")))
    }

    func testASilentReceiverIsLostAfterTheSilenceLimitCountedFromTheLastWordHeard() {
        var machine = following()
        XCTAssertEqual(machine.readTimeout(now: ms(100)), .seconds(15))
        _ = machine.received(.status(ReceiverStatus(name: "Kitchen", id: "abc", state: .playing)), now: .seconds(10))
        XCTAssertEqual(machine.readTimeout(now: .seconds(12)), .seconds(13), "a heartbeat's reply counts as a word")
        XCTAssertEqual(machine.readTimeout(now: .seconds(30)), .zero)
        XCTAssertEqual(machine.timedOut(), .timedOut(waitingFor: "event", after: .seconds(15)))
    }

    func testAWatchingConnectionDeliversStatusesAndEventsAndWaitsForEver() {
        var machine = greeted()
        machine.sending(.watch, now: ms(20))
        XCTAssertEqual(machine.phase, .watching)
        XCTAssertNil(machine.readTimeout(now: .seconds(3600)))
        let status = ReceiverStatus(name: "Kitchen", id: "abc", state: .playing)
        XCTAssertEqual(machine.received(.status(status), now: ms(30)), .status(status))
        XCTAssertEqual(machine.received(.event(.playbackState(.paused)), now: ms(40)), .event(.playbackState(.paused)))
        XCTAssertNil(machine.heartbeatDue())
    }

    /// A watched receiver pushes a status whenever a session starts (the queue's next source): beside a clock
    /// exchange it is delivered as a status; while a status request waits, it answers it (it is one).
    func testAStatusPushedWhileAWatchingConnectionWaitsIsDelivered() {
        var machine = greeted()
        machine.sending(.watch, now: ms(20))
        let status = ReceiverStatus(name: "Kitchen", id: "abc", state: .playing)
        machine.sending(.timeRequest(TimeRequest(sent: 5)), now: ms(30))
        XCTAssertEqual(machine.received(.status(status), now: ms(31)), .status(status))
        let reply = TimeReply(sent: 5, received: 6, replied: 7)
        XCTAssertEqual(machine.received(.timeReply(reply), now: ms(32)), .timeReply(reply))
        XCTAssertEqual(machine.phase, .watching)
        machine.sending(.statusRequest, now: ms(40))
        XCTAssertEqual(machine.received(.status(status), now: ms(41)), .reply(.status(status)))
        XCTAssertEqual(machine.phase, .watching)
    }

    func testAClockExchangeOnAnIdleConnectionWaitsForItsReplyAndPassesEventsOfAWatchedOne() {
        var machine = greeted()
        machine.sending(.timeRequest(TimeRequest(sent: 5)), now: ms(20))
        XCTAssertEqual(machine.readTimeout(now: ms(20)), .seconds(5))
        let reply = TimeReply(sent: 5, received: 6, replied: 7)
        XCTAssertEqual(machine.received(.timeReply(reply), now: ms(21)), .reply(.timeReply(reply)))
        XCTAssertEqual(machine.phase, .idle)

        var limits = Machine.Limits()
        limits.reply = .seconds(2)
        var short = Machine(helloSentAt: .zero, limits: limits)
        XCTAssertEqual(short.readTimeout(now: .seconds(1)), .seconds(1), "the caller's reply limit")
        _ = short.received(welcome, now: ms(1))
        short.sending(.statusRequest, now: ms(2))
        XCTAssertEqual(short.timedOut(), .timedOut(waitingFor: "status", after: .seconds(2)))
    }
}
