import XCTest

@testable import CastProtocol

final class PairingMessageTests: XCTestCase {
    private enum Fixtures {
        static let key = (0..<32).map { UInt8($0) }
        static let keyHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
        static let start = PairingStart(name: "alice@laptop", publicKey: key)
        static let challenge = PairingChallenge(
            salt: Array(repeating: 0xAB, count: 16), B: Array(repeating: 7, count: 384))
        static let proof = PairingProof(A: Array(repeating: 9, count: 384), M1: Array(repeating: 1, count: 64))
        static let confirmation = PairingConfirmation(M2: Array(repeating: 2, count: 64), publicKey: key)
        static let failure = PairingFailure(reason: .locked, message: "5 wrong PINs in a row", retryAfter: 60)
    }

    func testEveryMessageRoundTrips() throws {
        let messages: [PairingMessage] = [
            .start(Fixtures.start), .challenge(Fixtures.challenge), .proof(Fixtures.proof),
            .confirmation(Fixtures.confirmation), .failure(Fixtures.failure),
            .failure(PairingFailure(reason: .authenticationFailed, message: "wrong PIN")),
        ]
        for message in messages {
            XCTAssertEqual(try PairingMessage(message.frame()), message)
        }
        XCTAssertEqual(Set(messages.map(\.type)), Set(PairingMessageType.allCases))
    }

    func testWireIdsAreStableAndInThePairingRange() {
        XCTAssertEqual(PairingMessageType.allCases.map(\.rawValue), [30, 31, 32, 33, 34])
    }

    func testWireForm() throws {
        XCTAssertEqual(
            text(PairingMessage.start(Fixtures.start).frame()),
            #"{"name":"alice@laptop","publicKey":"\#(Fixtures.keyHex)"}"#)
        XCTAssertEqual(
            text(PairingMessage.challenge(PairingChallenge(salt: [1, 2, 3], B: [0xFF])).frame()),
            #"{"B":"/w==","salt":"AQID"}"#)
        XCTAssertEqual(
            text(PairingMessage.failure(Fixtures.failure).frame()),
            #"{"message":"5 wrong PINs in a row","reason":"locked","retryAfter":60}"#)
        XCTAssertEqual(
            text(PairingMessage.failure(PairingFailure(reason: .busy, message: "m")).frame()),
            #"{"message":"m","reason":"busy"}"#)
    }

    func testUpperCaseHexKeyIsAccepted() throws {
        let json = #"{"name":"a","publicKey":"\#(Fixtures.keyHex.uppercased())"}"#
        XCTAssertEqual(
            try PairingMessage(frame(.pairingStart, json)), .start(PairingStart(name: "a", publicKey: Fixtures.key)))
    }

    func testUnknownReasonDecodesAsItIs() throws {
        let message = try PairingMessage(frame(.pairingFailure, #"{"message":"m","reason":"solarFlare"}"#))
        XCTAssertEqual(
            message, .failure(PairingFailure(reason: PairingFailure.Reason(rawValue: "solarFlare"), message: "m")))
    }

    func testOutOfBoundsFieldsAreRejected() {
        let longName = String(repeating: "x", count: maximumTextLength + 1)
        let base64Of65 = String(repeating: "AAAA", count: 22)  // 66 bytes
        let base64Of513 = String(repeating: "AAAA", count: 171)  // 513 bytes
        let cases: [(PairingMessageType, String)] = [
            (.pairingStart, #"{"name":"\#(longName)","publicKey":"\#(Fixtures.keyHex)"}"#),
            (.pairingStart, #"{"name":"a","publicKey":"\#(Fixtures.keyHex.dropLast(2))"}"#),
            (.pairingStart, #"{"name":"a","publicKey":"\#(Fixtures.keyHex)00"}"#),
            (.pairingStart, #"{"name":"a","publicKey":"\#(Fixtures.keyHex.dropLast(2))zz"}"#),
            (.pairingChallenge, #"{"salt":"\#(base64Of65)","B":"AQ=="}"#),
            (.pairingChallenge, #"{"salt":"","B":"AQ=="}"#),
            (.pairingChallenge, #"{"salt":"AQ==","B":"\#(base64Of513)"}"#),
            (.pairingChallenge, #"{"salt":"AQ==","B":"not base64!"}"#),
            (.pairingProof, #"{"A":"AQ==","M1":"\#(base64Of65)"}"#),
            (.pairingProof, #"{"A":"AQ=="}"#),
            (.pairingConfirmation, #"{"M2":"AQ==","publicKey":7}"#),
            (.pairingFailure, #"{"message":"m","reason":"locked","retryAfter":-1}"#),
            (.pairingFailure, #"{"message":"m","reason":"locked","retryAfter":3601}"#),
            (.pairingFailure, #"{"message":"m","reason":""}"#),
            (.pairingFailure, #"{"message":"\#(longName)","reason":"locked"}"#),
            (.pairingFailure, "[]"),
            (.pairingFailure, "\u{FF}"),
        ]
        for (type, json) in cases {
            assertRejected(frame(type, json), .malformedMessage, json.prefix(80))
        }
    }

    func testTypesOutsideThePairingRangeAreRejected() {
        for type: UInt8 in [1, 29, 35, 39, 255] {
            assertRejected(Frame(type: type, payload: Array("{}".utf8)), .unknownMessageType, "\(type)")
        }
    }

    func testRetryAfterSecondsComeFromTheLimiterDecision() {
        XCTAssertEqual(PairingAttemptLimiter.Decision.busy(retryAfter: .milliseconds(59_001)).retryAfterSeconds, 60)
        XCTAssertNil(PairingAttemptLimiter.Decision.closed.retryAfterSeconds)
        XCTAssertEqual(PairingAttemptLimiter.Decision.backingOff(retryAfter: .seconds(2)).retryAfterSeconds, 2)
        XCTAssertNil(PairingAttemptLimiter.Decision.allowed.retryAfterSeconds)
    }

    // MARK: Helpers

    private func text(_ frame: Frame) -> String { String(decoding: frame.payload, as: UTF8.self) }

    private func frame(_ type: PairingMessageType, _ json: String) -> Frame {
        Frame(type: type.rawValue, payload: Array(json.utf8))
    }

    private func assertRejected(
        _ frame: Frame, _ code: ProtocolError.Code, _ label: Substring, line: UInt = #line
    ) {
        XCTAssertThrowsError(try PairingMessage(frame), String(label), line: line) { error in
            XCTAssertEqual((error as? ProtocolError)?.code, code, "\(label): \(error)", line: line)
        }
    }
}
