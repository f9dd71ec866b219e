import XCTest

@testable import CastProtocol

final class ReceiverConnectionStateMachineTests: XCTestCase {
    private enum Fixtures {
        static let welcome = Welcome(name: "Box", id: "0123", auth: "none")
        static let hello = Message.hello(Hello(name: "bob", software: "test")).frame()
    }

    func testHelloIsWelcomedWhenAuthIsNone() {
        var machine = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .none)
        XCTAssertEqual(machine.receive(Fixtures.hello), .send(.welcome(Fixtures.welcome)))
        XCTAssertEqual(machine.peer?.name, "bob")
        XCTAssertEqual(machine.receive(Message.statusRequest.frame()), .sendStatus)
        XCTAssertEqual(machine.receive(Message.statusRequest.frame()), .sendStatus)
    }

    func testPlayAndControlsAfterHello() {
        var machine = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .none)
        let request = PlayRequest(title: "a", media: MediaDescriptor(size: 1, seekable: true, nameHint: nil))
        assertClosed(machine.receive(Message.play(request).frame()), .unexpectedMessage)
        machine = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .none)
        _ = machine.receive(Fixtures.hello)
        XCTAssertEqual(machine.receive(Message.play(request).frame()), .play(request))
        XCTAssertEqual(machine.receive(Message.control(PlaybackControl(.stop)).frame()), .control(.stop))
        assertClosed(machine.receive(Message.mediaHello(MediaHello(session: "s")).frame()), .unexpectedMessage)
    }

    /// A time request is answered on an admitted connection only; a stranger's is refused from its type byte.
    func testTimeRequestsAreAnsweredOnlyAfterHello() {
        let request = Message.timeRequest(TimeRequest(sent: 42)).frame()
        var stranger = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .pin)
        assertClosed(stranger.receive(request), .unexpectedMessage)
        var machine = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .pin, peerIsPaired: true)
        _ = machine.receive(Fixtures.hello)
        XCTAssertEqual(machine.receive(request), .timeReply(TimeRequest(sent: 42)))
        let reply = Message.timeReply(TimeReply(sent: 1, received: 2, replied: 3))
        assertClosed(machine.receive(reply.frame()), .unexpectedMessage)
    }

    func testMediaHelloMakesAMediaConnection() {
        var machine = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .none)
        XCTAssertEqual(
            machine.receive(Message.mediaHello(MediaHello(session: "s1")).frame()), .attachMedia(session: "s1"))
        var locked = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .pin)
        assertClosed(locked.receive(Message.mediaHello(MediaHello(session: "s1")).frame()), .pairingRequired)
    }

    func testNoOtherModeAdmitsAnUnknownSender() {
        for auth in [AuthMode.pin, .password] {
            var machine = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: auth)
            assertClosed(machine.receive(Fixtures.hello), .pairingRequired)
            XCTAssertFalse(machine.isEstablished)
        }
    }

    func testPairedPeerIsWelcomedUnderPin() {
        var machine = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .pin, peerIsPaired: true)
        XCTAssertEqual(machine.receive(Fixtures.hello), .send(.welcome(Fixtures.welcome)))
    }

    func testPairingThenHello() {
        var machine = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .pin)
        let start = PairingStart(name: "bob", publicKey: Array(repeating: 7, count: 32))
        XCTAssertEqual(machine.receive(Message.pairing(.start(start)).frame()), .startPairing(start))
        XCTAssertEqual(machine.phase, .pairing)
        // Only the proof is accepted now, and nothing else is even decoded.
        var other = machine
        assertClosed(other.receive(Fixtures.hello), .unexpectedMessage)
        let proof = PairingProof(A: [1, 2, 3], M1: Array(repeating: 9, count: 64))
        XCTAssertEqual(machine.receive(Message.pairing(.proof(proof)).frame()), .finishPairing(start, proof))
        machine.pairingSucceeded()
        XCTAssertEqual(machine.phase, .awaitingHello)
        XCTAssertEqual(machine.receive(Fixtures.hello), .send(.welcome(Fixtures.welcome)))
    }

    func testPairingIsNotOfferedWithAuthNone() {
        var machine = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .none)
        let start = PairingStart(name: "bob", publicKey: Array(repeating: 7, count: 32))
        guard
            case .sendAndClose(.pairing(.failure(let failure)), _) = machine.receive(
                Message.pairing(.start(start)).frame())
        else { return XCTFail("expected a pairing failure") }
        XCTAssertEqual(failure.reason, .notAccepted)
    }

    func testUnadmittedPeerGetsNothingButAdmissionMessagesDecoded() {
        // A malformed play before hello is refused for its type, not parsed.
        var machine = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .pin)
        assertClosed(machine.receive(Frame(type: MessageType.play.rawValue, payload: [0xFF])), .unexpectedMessage)
        var proofFirst = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .pin)
        assertClosed(
            proofFirst.receive(Frame(type: MessageType.pairingProof.rawValue, payload: Array("{}".utf8))),
            .unexpectedMessage)
    }

    func testMessageBeforeHelloCloses() {
        var machine = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .none)
        assertClosed(machine.receive(Message.statusRequest.frame()), .unexpectedMessage)
    }

    func testWrongVersionCloses() {
        var machine = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .none)
        let hello = Message.hello(Hello(version: 99, name: "x", software: "y")).frame()
        assertClosed(machine.receive(hello), .unsupportedVersion)
    }

    func testUnknownTypeAfterHelloCloses() {
        var machine = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .none)
        _ = machine.receive(Fixtures.hello)
        assertClosed(machine.receive(Frame(type: 99, payload: [])), .unknownMessageType)
    }

    func testSecondHelloCloses() {
        var machine = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .none)
        _ = machine.receive(Fixtures.hello)
        assertClosed(machine.receive(Fixtures.hello), .unexpectedMessage)
    }

    func testReceiverOnlyMessagesFromASenderClose() {
        var machine = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .none)
        _ = machine.receive(Fixtures.hello)
        assertClosed(machine.receive(Message.welcome(Fixtures.welcome).frame()), .unexpectedMessage)
    }

    func testFramingFailureAndTimeoutClose() {
        var a = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .none)
        assertClosed(a.framingFailed(ProtocolError(.frameTooLarge, "big")), .frameTooLarge)
        var b = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .none)
        assertClosed(b.timedOut("no hello within 5 s"), .timeout)
    }

    private func assertClosed(_ action: ReceiverConnectionStateMachine.Action, _ code: ErrorCode, line: UInt = #line) {
        guard case .sendAndClose(.error(let error), let reason) = action else {
            return XCTFail("expected sendAndClose(error), got \(action)", line: line)
        }
        XCTAssertEqual(error.code, code, line: line)
        XCTAssertFalse(reason.isEmpty, line: line)
    }
}
