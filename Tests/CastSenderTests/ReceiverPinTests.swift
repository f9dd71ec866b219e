import CastProtocol
import CastSecurity
import Foundation
import XCTest

@testable import CastSender

/// The sender's pin rule: what the user asked for (and how the receiver was found) decides which paired key must
/// answer, never the name the receiver gives itself.
final class ReceiverPinTests: XCTestCase {
    private enum Fixtures {
        static let livingID = "a1b2c3d4e5f60718a1b2c3d4e5f60718"
        static let kitchenID = "0123456789abcdef0123456789abcdef"
        static let impostorID = "ffffffffffffffffffffffffffffffff"
        static let living = KnownReceiver(
            id: livingID, publicKey: Array(repeating: 1, count: 32), name: "Living Room", pairedAt: Date(),
            address: "10.0.0.5:7100")
        static let kitchen = KnownReceiver(
            id: kitchenID, publicKey: Array(repeating: 2, count: 32), name: "Kitchen", pairedAt: Date(),
            address: "10.0.0.6:7100")
        static let paired = [living, kitchen]

        /// A receiver found by discovery, advertising `name` (instance and `fn`) and `id`.
        static func advertised(_ name: String, id: String = impostorID, requested: String? = nil) -> ReceiverDescription
        {
            ReceiverDescription(
                name: name, id: id, host: "10.0.0.9", port: 7100,
                record: ServiceRecord(id: id, friendlyName: name, features: [.audio], auth: .none), requested: requested
            )
        }
    }

    func testTheNameTheUserTypedPinsItsReceiverWhateverAnswers() {
        for found in ["Living Room 2", "Living Room ", "Living Room TV", "Den"] {
            let pin = ReceiverPin(Fixtures.advertised(found, requested: "living room"), paired: Fixtures.paired)
            XCTAssertFalse(pin.admits(Fixtures.impostorID), found)
            XCTAssertEqual(pin.refusal(of: Fixtures.impostorID)?.receivers, [Fixtures.living], found)
        }
        // The paired receiver itself, found under its name, is admitted.
        let real = ReceiverPin(
            Fixtures.advertised("Living Room", id: Fixtures.livingID, requested: "Living Room"), paired: Fixtures.paired
        )
        XCTAssertTrue(real.admits(Fixtures.livingID))
        XCTAssertNil(real.refusal(of: Fixtures.livingID))
    }

    func testAnotherPairedReceiverMatchedByPrefixIsNotWhatTheUserAskedFor() {
        // "Living Room" is paired but out of sight; a paired "Living Room TV" must not stand in for it.
        let tv = KnownReceiver(
            id: "7777777777777777aaaaaaaaaaaaaaaa", publicKey: Array(repeating: 3, count: 32), name: "Living Room TV",
            pairedAt: Date())
        let pin = ReceiverPin(
            Fixtures.advertised("Living Room TV", id: tv.id, requested: "Living Room"), paired: Fixtures.paired + [tv])
        XCTAssertFalse(pin.admits(tv.id))
        // A prefix that names no paired receiver exactly leads to every paired receiver it begins.
        let prefix = ReceiverPin(
            Fixtures.advertised("Living Room TV", id: tv.id, requested: "liv"), paired: Fixtures.paired + [tv])
        XCTAssertTrue(prefix.admits(tv.id))
        XCTAssertFalse(
            ReceiverPin(Fixtures.advertised("Living Roomz", requested: "liv"), paired: Fixtures.paired)
                .admits(Fixtures.impostorID))
    }

    func testAnAdvertisedNameThatFoldsToAPairedNamePinsIt() {
        for name in [
            "Living Room ", "living  room", "LIVING ROOM", "Living\u{200B} Room", "Lïving Room", "\tLiving Room\n",
        ] {
            XCTAssertEqual(ReceiverPin.folded(name), "living room", name.debugDescription)
            let pin = ReceiverPin(Fixtures.advertised(name), paired: Fixtures.paired)
            XCTAssertFalse(pin.admits(Fixtures.impostorID), name.debugDescription)
        }
        XCTAssertNotEqual(ReceiverPin.folded("Living Room 2"), "living room")
        // No lead at all: an unpaired receiver under a name of its own is up to its own auth.
        XCTAssertEqual(ReceiverPin(Fixtures.advertised("Living Room 2"), paired: Fixtures.paired).leads, [])
        XCTAssertTrue(
            ReceiverPin(Fixtures.advertised("Living Room 2"), paired: Fixtures.paired).admits(Fixtures.impostorID))
    }

    func testAnAddressPinsTheReceiverLastReachedThere() {
        let typed = ReceiverDescription(
            name: "10.0.0.5:7100", id: "", host: "10.0.0.5", port: 7100, requested: "10.0.0.5:7100")
        let pin = ReceiverPin(typed, paired: Fixtures.paired)
        XCTAssertFalse(pin.admits(Fixtures.impostorID))
        XCTAssertFalse(pin.admits(Fixtures.kitchenID), "another paired receiver is not the one last seen there")
        XCTAssertTrue(pin.admits(Fixtures.livingID))
        XCTAssertEqual(pin.refusal(of: Fixtures.impostorID)?.what, "the address 10.0.0.5:7100")
        // A program's own description (no discovery): its name and its address.
        let byProgram = ReceiverDescription(name: "Living Room ", id: "", host: "127.0.0.1", port: 9)
        XCTAssertFalse(ReceiverPin(byProgram, paired: Fixtures.paired).admits(Fixtures.impostorID))
        // An address nobody was reached at: no lead.
        let elsewhere = ReceiverDescription(name: "10.0.0.7:7100", id: "", host: "10.0.0.7", port: 7100)
        XCTAssertEqual(ReceiverPin(elsewhere, paired: Fixtures.paired).leads, [])
        // Discovery's address is not a lead (addresses move; the advertisement names the receiver).
        let moved = Fixtures.advertised("Kitchen", id: Fixtures.kitchenID)
        var atOldAddress = moved
        atOldAddress.host = "10.0.0.5"
        XCTAssertTrue(ReceiverPin(atOldAddress, paired: Fixtures.paired).admits(Fixtures.kitchenID))
    }

    func testAnIDTheUserTypedPinsThatReceiver() {
        let pin = ReceiverPin(
            Fixtures.advertised("Kitchen", id: Fixtures.kitchenID, requested: Fixtures.livingID.uppercased()),
            paired: Fixtures.paired)
        XCTAssertFalse(pin.admits(Fixtures.kitchenID))
        XCTAssertEqual(pin.refusal(of: Fixtures.kitchenID)?.receivers, [Fixtures.living])
    }

    func testEveryLeadMustAgree() {
        // Typed "Kitchen", found a receiver advertising the name "Living Room": no key satisfies both.
        let pin = ReceiverPin(
            Fixtures.advertised("Living Room", id: Fixtures.kitchenID, requested: "Kitchen"), paired: Fixtures.paired)
        XCTAssertFalse(pin.admits(Fixtures.kitchenID))
        XCTAssertFalse(pin.admits(Fixtures.livingID))
    }

    func testTheImpersonationWarningNamesThePairedReceiverAndWhy() throws {
        let directory = NSTemporaryDirectory() + "cast-pin-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let key = Array(repeating: UInt8(5), count: 32)
        let id = fingerprint(ofPublicKey: key)
        try KnownReceivers.load(directory: directory).pin(
            id: id, publicKey: key, name: "Living Room", address: "10.0.0.5:7100")
        let impostorKey = Array(repeating: UInt8(6), count: 32)
        XCTAssertThrowsError(
            try checkPinnedIdentity(
                Fixtures.advertised(
                    "Living Room 2", id: fingerprint(ofPublicKey: impostorKey), requested: "Living Room"),
                peerKey: impostorKey, configDirectory: directory)
        ) { error in
            let error = error as? CastError
            XCTAssertEqual(error?.kind, .notAuthorised)
            XCTAssertTrue(
                error?.message.contains("WARNING: the identity of receiver \"Living Room\" has changed") == true)
            XCTAssertTrue(error?.message.contains("expected id \(id)") == true, error?.message ?? "")
            XCTAssertTrue(error?.message.contains("asked for by \"Living Room\"") == true, error?.message ?? "")
        }
        XCTAssertEqual(
            try checkPinnedIdentity(
                Fixtures.advertised("Living Room", id: id, requested: "Living Room"), peerKey: key,
                configDirectory: directory), id)
    }
}
