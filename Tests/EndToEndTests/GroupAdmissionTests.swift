import CastProtocol
import CastSecurity
import CastTestSupport
import Foundation
import XCTest

/// Who may make a playing session do what (issue 31, "Joins only where a user pointed"): a `join` naming an address
/// is not followed by the group's sender, and a session's thumbnails are its own sender's. (A worker's events outside
/// an engine's are dropped: WorkerMessageTests, since no worker here misbehaves.)
final class GroupAdmissionTests: LabTestCase {
    override class var labPrefix: String { "gmadm" }
    override class var labRooms: Int { 3 }

    private var senderEnvironment: [String: String] { ["XDG_CONFIG_HOME": "\(work!)/sender"] }

    /// A group plays on the kitchen and the living room; a stranger asks the kitchen (a `join` control, passed on to the
    /// group's `cast send` as a `joinRequest`) to add the attic by its address, castd not advertised there. The group's
    /// sender refuses to connect (it says why on its terminal), the attic hears from nobody and plays nothing, and the
    /// group plays on to its end.
    func testAJoinNamingAnAddressIsNotFollowed() throws {
        let kitchen = try startCapturingRoom("Kitchen", on: .room1, folder: "kitchen")
        let living = try startCapturingRoom("Living Room", on: .room2, folder: "living")
        let attic = try startCapturingRoom("Attic", on: .room3, folder: "attic", advertised: false)
        let clip = try beeps(seconds: 6)
        let sender = try lab.start(
            on: .phone, [Paths.cast, "send", clip, "--to", "Kitchen", "--to", "Living Room"],
            environment: senderEnvironment)
        XCTAssertTrue(
            waitUntil(timeout: 30) { kitchen.capture.total > 192_000 && living.capture.total > 192_000 },
            "the group did not play: \(sender.output)")

        let stranger = try Identity.loadOrCreate(directory: "\(work!)/stranger")
        let client = try LabClient(
            lab: lab, from: .phone, to: lab.address(.room1), port: kitchen.port, identity: stranger)
        defer { client.close() }
        let address = "\(lab.address(.room3)):\(attic.port)"
        try client.send(.control(PlaybackControl(.join(receiver: address))))
        let refusal = "cast: could not add \(address) to the group: an address from the wire is not followed"
        XCTAssertNotNil(sender.waitForLine(containing: refusal, timeout: 10), "\(sender.output)")

        XCTAssertEqual(sender.waitForExit(timeout: 30), 0, "\(sender.output)")
        XCTAssertFalse(attic.daemon.output.contains { $0.contains("connected from") }, "\(attic.daemon.output)")
        XCTAssertEqual(attic.capture.stop(atLeast: 0).count, 0, "the attic played")
        XCTAssertFalse(sender.output.contains { $0.contains("Attic joined") }, "\(sender.output)")
    }

    /// While `cast send` plays on the living room, another sender (a key of its own) asks for thumbnails: each time is
    /// answered with an error, no image; the playing sender's key, on a connection of its own, gets the images.
    func testAnotherSendersThumbnailRequestIsRefused() throws {
        let room = try startCapturingRoom("Living Room", on: .room1, folder: "living")
        let clip = try Media.clip("thumbs.mp4", seconds: 6)
        let sender = try lab.start(
            on: .phone, [Paths.cast, "send", clip, "--to", "Living Room", "--json"], environment: senderEnvironment)
        XCTAssertNotNil(sender.waitForLine(containing: #""state":"playing""#, timeout: 20), "\(sender.output)")

        func answers(_ identity: Identity, request: UInt32) throws -> [ThumbnailPart] {
            let client = try LabClient(
                lab: lab, from: .phone, to: lab.address(.room1), port: room.port, identity: identity)
            defer { client.close() }
            try client.send(.thumbnailRequest(ThumbnailRequest(request: request, times: [1, 2], exact: false)))
            var parts: [ThumbnailPart] = []
            let deadline = Date().addingTimeInterval(20)
            while Set(parts.filter { $0.part == $0.parts - 1 }.map(\.index)).count < 2, Date() < deadline {
                guard let message = try client.next(timeout: deadline.timeIntervalSinceNow) else { break }
                if case .thumbnail(let part) = message, part.request == request { parts.append(part) }
            }
            return parts
        }
        let strangers = try answers(Identity.loadOrCreate(directory: "\(work!)/stranger"), request: 1)
        XCTAssertEqual(strangers.map(\.index), [0, 1], "\(strangers)")
        XCTAssertEqual(strangers.map(\.error), Array(repeating: "what plays is another sender's", count: 2))
        XCTAssertTrue(strangers.allSatisfy { $0.data.isEmpty }, "no image to another sender")
        // The sender's own key (cast keeps it in its config folder): served.
        let owners = try answers(Identity.loadOrCreate(directory: "\(work!)/sender/cast"), request: 2)
        XCTAssertEqual(Set(owners.map(\.index)), [0, 1], "\(owners)")
        XCTAssertTrue(owners.allSatisfy { $0.error == nil && !$0.data.isEmpty }, "\(owners.map(\.error))")
        XCTAssertEqual(sender.waitForExit(timeout: 30), 0, "playback went on to the end: \(sender.output)")
    }
}
