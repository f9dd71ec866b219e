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
        assertClosed(machine.receive(Message.play(request).frame()), "unexpectedMessage")
        machine = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .none)
        _ = machine.receive(Fixtures.hello)
        XCTAssertEqual(machine.receive(Message.play(request).frame()), .play(request))
        XCTAssertEqual(machine.receive(Message.control(PlaybackControl(.stop)).frame()), .control(.stop))
        assertClosed(machine.receive(Message.mediaHello(MediaHello(session: "s")).frame()), "unexpectedMessage")
    }

    func testMediaHelloMakesAMediaConnection() {
        var machine = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .none)
        XCTAssertEqual(machine.receive(Message.mediaHello(MediaHello(session: "s1")).frame()), .attachMedia(session: "s1"))
        var locked = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .pin)
        assertClosed(locked.receive(Message.mediaHello(MediaHello(session: "s1")).frame()), "pairingRequired")
    }

    func testNoOtherModeAdmitsAnUnknownSender() {
        for auth in [AuthMode.pin, .password] {
            var machine = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: auth)
            assertClosed(machine.receive(Fixtures.hello), "pairingRequired")
            XCTAssertFalse(machine.isEstablished)
        }
    }

    func testMessageBeforeHelloCloses() {
        var machine = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .none)
        assertClosed(machine.receive(Message.statusRequest.frame()), "unexpectedMessage")
    }

    func testWrongVersionCloses() {
        var machine = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .none)
        let hello = Message.hello(Hello(version: 99, name: "x", software: "y")).frame()
        assertClosed(machine.receive(hello), "unsupportedVersion")
    }

    func testUnknownTypeAfterHelloCloses() {
        var machine = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .none)
        _ = machine.receive(Fixtures.hello)
        assertClosed(machine.receive(Frame(type: 99, payload: [])), "unknownMessageType")
    }

    func testSecondHelloCloses() {
        var machine = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .none)
        _ = machine.receive(Fixtures.hello)
        assertClosed(machine.receive(Fixtures.hello), "unexpectedMessage")
    }

    func testReceiverOnlyMessagesFromASenderClose() {
        var machine = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .none)
        _ = machine.receive(Fixtures.hello)
        assertClosed(machine.receive(Message.welcome(Fixtures.welcome).frame()), "unexpectedMessage")
    }

    func testFramingFailureAndTimeoutClose() {
        var a = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .none)
        assertClosed(a.framingFailed(ProtocolError(.frameTooLarge, "big")), "frameTooLarge")
        var b = ReceiverConnectionStateMachine(welcome: Fixtures.welcome, auth: .none)
        assertClosed(b.timedOut("no hello within 5 s"), "timeout")
    }

    private func assertClosed(_ action: ReceiverConnectionStateMachine.Action, _ code: String, line: UInt = #line) {
        guard case .sendAndClose(.error(let error), let reason) = action else {
            return XCTFail("expected sendAndClose(error), got \(action)", line: line)
        }
        XCTAssertEqual(error.code, code, line: line)
        XCTAssertFalse(reason.isEmpty, line: line)
    }
}
