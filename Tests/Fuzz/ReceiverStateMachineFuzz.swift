// ReceiverConnectionStateMachine: frames and events from a hostile sender, driven through a machine for
// every auth mode, with the peer's TLS key paired or not.
//
// Input: byte 0 = verdicts of the I/O layer on pairing proofs (bit i: the i-th proof verifies); then
// records of a 2-byte big-endian header h:
//   h = 0xFFFF: the connection timed out (`timedOut`);
//   h = 0xFFFE: the frame decoder failed (`framingFailed`, emptyFrame or frameTooLarge by the next byte);
//   otherwise:  a frame of type = next byte and payload = the next (h & 0x3FFF) bytes.
// The machine is driven as the connection drives it: nothing after `.sendAndClose` or `.attachMedia`;
// after `.finishPairing` either `pairingSucceeded()` (proof verified) or the end (failure sent, closed).
//
// Invariants: no trap (its preconditionFailure paths are bugs when this contract is kept); with auth pin
// or password, no `.send(.welcome)` and no `.attachMedia` unless the peer's key is paired or pairing
// succeeded on this connection; nothing but handshake and pairing has an effect (`.play`, `.control`, `.watch`,
// `.sendStatus`) before welcome; `.startPairing` only for pin/password, `.finishPairing` only right after
// it with the same start; `.sendAndClose` carries an error or a pairing failure; `isEstablished`, `peer`
// and `phase` agree with what was returned.

private let welcome = Welcome(name: "Fuzz Box", id: "f00dfacef00dfacef00dfacef00dface", auth: "pin")

private enum Event {
    case frame(Frame)
    case timedOut
    case framingFailed(ProtocolError)
}

private func events(_ reader: inout ByteReader) -> [Event] {
    var events: [Event] = []
    while !reader.isAtEnd && events.count < 64 {
        let header = reader.uint16()
        switch header {
        case 0xFFFF: events.append(.timedOut)
        case 0xFFFE:
            events.append(
                .framingFailed(
                    reader.byte() & 1 == 0
                        ? ProtocolError(.emptyFrame, "frame length 0")
                        : ProtocolError(.frameTooLarge, "frame too large")))
        default:
            let type = reader.byte()
            events.append(.frame(Frame(type: type, payload: reader.take(Int(header & 0x3FFF)))))
        }
    }
    return events
}

private func drive(_ events: [Event], auth: AuthMode, peerIsPaired: Bool, verdicts: UInt8) {
    var machine = ReceiverConnectionStateMachine(welcome: welcome, auth: auth, peerIsPaired: peerIsPaired)
    var admitted = auth == .none || peerIsPaired
    var welcomed = false
    var pairingStart: PairingStart?
    var proofs = 0
    invariant(machine.phase == .awaitingHello && !machine.isEstablished, "a new machine is not awaiting hello")
    for (index, event) in events.enumerated() {
        let action: ReceiverConnectionStateMachine.Action
        switch event {
        case .frame(let frame): action = machine.receive(frame)
        case .timedOut: action = machine.timedOut("fuzz timeout")
        case .framingFailed(let error): action = machine.framingFailed(error)
        }
        let context = "auth \(auth.rawValue), paired \(peerIsPaired), event \(index): \(action)"
        switch action {
        case .send(.welcome(let sent)):
            invariant(!welcomed, "welcome sent twice; \(context)")
            invariant(sent == welcome, "welcome differs from the receiver's; \(context)")
            invariant(admitted, "an unpaired sender was welcomed; \(context)")
            invariant(pairingStart == nil, "welcomed in the middle of pairing; \(context)")
            welcomed = true
        case .send(let message):
            invariant(false, "unexpected message sent: \(message); \(context)")
        case .sendStatus, .play, .control, .watch, .thumbnails, .cancelThumbnails, .timeReply:
            invariant(welcomed && admitted, "a request took effect before welcome; \(context)")
        case .attachMedia:
            invariant(admitted, "an unpaired media connection was attached; \(context)")
            invariant(
                !welcomed && pairingStart == nil, "a control connection turned into a media connection; \(context)")
            invariant(machine.phase == .established, "phase \(machine.phase) after attachMedia; \(context)")
            return
        case .startPairing(let start):
            invariant(auth != .none, "pairing started with auth none; \(context)")
            invariant(!welcomed && pairingStart == nil, "pairing started out of turn; \(context)")
            pairingStart = start
        case .finishPairing(let start, _):
            invariant(pairingStart == start, "finishPairing for another start; \(context)")
            invariant(machine.phase == .pairing, "phase \(machine.phase) while verifying; \(context)")
            let verified = verdicts >> (proofs % 8) & 1 == 1
            proofs += 1
            guard verified else { return }  // the I/O layer sends a pairing failure and closes
            machine.pairingSucceeded()
            pairingStart = nil
            admitted = true
        case .sendAndClose(let message, _):
            switch message {
            case .error: break
            case .pairing(.failure(let failure)):
                invariant(auth == .none && failure.reason == .notAccepted, "pairing failure \(failure); \(context)")
            default: invariant(false, "closed with \(message.type); \(context)")
            }
            invariant(machine.phase == .closed, "phase \(machine.phase) after close; \(context)")
            return
        }
        invariant(
            machine.isEstablished == welcomed,
            "isEstablished \(machine.isEstablished), welcomed \(welcomed); \(context)")
        invariant(
            (machine.peer != nil) == welcomed,
            "peer \(String(describing: machine.peer)), welcomed \(welcomed); \(context)")
        let phase: ReceiverConnectionStateMachine.Phase =
            welcomed ? .established : pairingStart != nil ? .pairing : .awaitingHello
        invariant(machine.phase == phase, "phase \(machine.phase), expected \(phase); \(context)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var reader = ByteReader(fuzzInput(data, size))
    let verdicts = reader.byte()
    let events = events(&reader)
    for auth in AuthMode.allCases {
        for paired in [false, true] { drive(events, auth: auth, peerIsPaired: paired, verdicts: verdicts) }
    }
    return 0
}
