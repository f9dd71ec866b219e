import XCTest

@testable import CastReceiver

final class ConnectionAdmissionTests: XCTestCase {
    private enum Fixtures {
        static let limits = ConnectionAdmission.Limits(
            maximumAdmitted: 2, maximumUnadmitted: 4, maximumUnadmittedPerSource: 2)
    }

    private func ticket(_ arrival: ConnectionAdmission.Arrival) -> ConnectionAdmission.Ticket? {
        if case .serve(let ticket, _) = arrival { return ticket }
        return nil
    }

    func testASourceHasAShareOfTheUnadmittedPlacesAndGetsItBackAsItsConnectionsGo() throws {
        var admission = ConnectionAdmission(limits: Fixtures.limits)
        let first = try XCTUnwrap(ticket(admission.arrive(from: "10.0.0.9")))
        XCTAssertNotNil(ticket(admission.arrive(from: "10.0.0.9")))
        guard case .refuse(let reason) = admission.arrive(from: "10.0.0.9") else {
            return XCTFail("a third connection from one source is refused")
        }
        XCTAssertTrue(reason.contains("10.0.0.9"), reason)
        // Other sources are not affected.
        XCTAssertEqual(admission.arrive(from: "10.0.0.2"), .serve(ticket: 2, evicting: nil))
        // A connection that ends, or is admitted, gives its source the place back.
        admission.leave(first)
        XCTAssertNotNil(ticket(admission.arrive(from: "10.0.0.9")))
        XCTAssertEqual(admission.unadmittedCount, 3)
    }

    func testWhenAllPlacesAreTakenTheOldestUnadmittedMakesRoom() {
        var admission = ConnectionAdmission(limits: Fixtures.limits)
        for source in ["a", "b", "c", "d"] { _ = admission.arrive(from: source) }
        XCTAssertEqual(admission.unadmittedCount, 4)
        XCTAssertEqual(admission.arrive(from: "e"), .serve(ticket: 4, evicting: 0))
        XCTAssertEqual(admission.arrive(from: "f"), .serve(ticket: 5, evicting: 1))
        XCTAssertEqual(admission.unadmittedCount, 4)
        // An evicted connection is gone: its end changes nothing, and it cannot be admitted any more.
        admission.leave(0)
        XCTAssertEqual(admission.unadmittedCount, 4)
        XCTAssertFalse(admission.admit(1))
    }

    /// Strangers reopening without end never push out a sender that was admitted, and a newcomer is always served:
    /// it only has to be admitted before `maximumUnadmitted` connections arrive after it.
    func testAdmittedConnectionsAreNeverEvicted() throws {
        var admission = ConnectionAdmission(limits: Fixtures.limits)
        let sender = try XCTUnwrap(ticket(admission.arrive(from: "phone")))
        XCTAssertTrue(admission.admit(sender))
        XCTAssertTrue(admission.admit(sender), "admitting twice is harmless")
        for round in 0..<1000 {
            guard case .serve(_, let evicted) = admission.arrive(from: "stranger \(round % 50)") else {
                return XCTFail("a newcomer is served")
            }
            XCTAssertNotEqual(evicted, sender)
        }
        XCTAssertEqual(admission.admittedCount, 1)
        XCTAssertEqual(admission.unadmittedCount, 4)
    }

    func testAdmittedConnectionsAreBounded() throws {
        var admission = ConnectionAdmission(limits: Fixtures.limits)
        let tickets = try (0..<3).map { try XCTUnwrap(ticket(admission.arrive(from: "s\($0)"))) }
        XCTAssertTrue(admission.admit(tickets[0]))
        XCTAssertTrue(admission.admit(tickets[1]))
        XCTAssertFalse(admission.admit(tickets[2]), "the third admitted connection must close")
        admission.leave(tickets[0])
        XCTAssertTrue(admission.admit(tickets[2]))
        XCTAssertEqual(admission.admittedCount, 2)
        XCTAssertEqual(admission.unadmittedCount, 0)
    }

    func testTheSourceIsThePeersAddressWithoutItsPort() {
        XCTAssertEqual(ConnectionAdmission.source(ofPeer: "192.0.2.1:5000"), "192.0.2.1")
        XCTAssertEqual(ConnectionAdmission.source(ofPeer: "[2001:db8::1]:5000"), "[2001:db8::1]")
        XCTAssertEqual(ConnectionAdmission.source(ofPeer: "unknown"), "unknown")
    }
}
