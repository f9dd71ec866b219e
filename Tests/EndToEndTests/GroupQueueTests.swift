import CastBase
import CastProtocol
import CastTestSupport
import Foundation
import XCTest

/// The rest of groups (issue 31): a queue keeps one group across its sources; a group plays a URL each member opens. Two castd on two hosts of the lab, each
/// in a time namespace of its own (3 and 7 s ahead), measured from outside castd as GroupTests measures them: each
/// one's ALSA output is a FIFO this test reads, stamping every read on arrival.
final class GroupQueueTests: LabTestCase {
    override class var labPrefix: String { "gq" }
    override class var labRooms: Int { 2 }

    /// Bytes per second of the capture: S16 stereo at 48 kHz.
    private let rate = 192_000.0

    /// castd named `name` on `host`, its monotonic clock `shift` s ahead, playing into a FIFO this test reads; returns
    /// once it listens and is advertised.
    private func startMember(_ name: String, on host: Lab.Host, shift: Int) throws -> CapturingRoom {
        try startCapturingRoom(name, on: host, folder: "\(shift)", shift: shift)
    }

    /// The stretches a capture was written in (split where nothing came for 200 ms or more: castd closes its device
    /// between two sources), each as its reads.
    private func stretches(_ capture: FIFOCapture) -> [[FIFOCapture.Read]] {
        var stretches: [[FIFOCapture.Read]] = []
        for read in capture.reads {
            if let last = stretches.last?.last, read.arrival - last.arrival < 200_000_000 {
                stretches[stretches.count - 1].append(read)
            } else {
                stretches.append([read])
            }
        }
        return stretches
    }

    /// When a stretch's stream began on this test's clock (s): the least of `arrival − bytes / rate` over its steady
    /// reads (not its first or last quarter second), its bytes counted from the byte before its first read.
    private func streamStart(_ stretch: [FIFOCapture.Read], base: Int) -> Double? {
        let (begin, end) = (stretch.first?.total ?? 0, stretch.last?.total ?? 0)
        let steady = stretch.filter { $0.total > begin + 48_000 && $0.total < end - 48_000 }
        guard steady.count > 20 else { return nil }
        return steady.map { Double($0.arrival) / 1e9 - Double($0.total - base) / rate }.min()
    }

    /// `cast queue a.flac b.flac --to Kitchen --to "Living Room"` with the living room not up at the start: it joins
    /// the first file late (as a receiver not reached at the start does), and the second file starts on both at once,
    /// in step, over the same connections: each castd sees one sender connection for the whole queue, and the sender
    /// says once that the living room joined. Before, each file started a group of its own: the living room, looked
    /// for again, joined the second file a second or more after the kitchen began it.
    func testAQueueKeepsOneGroupAcrossItsSources() throws {
        try requireTimeNamespaces()
        let first = try beeps(seconds: 8, name: "a.flac")
        let second = try beeps(seconds: 5, name: "b.flac")
        let kitchen = try startMember("Kitchen", on: .room1, shift: 3)
        let sender = try lab.start(
            on: .phone,
            [Paths.cast, "queue", first, second, "--to", "Kitchen", "--to", "Living Room", "--timeout", "1"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        XCTAssertNotNil(
            sender.waitForLine(containing: "Living Room is left out of the group", timeout: 20), "\(sender.output)")
        XCTAssertTrue(
            waitUntil(timeout: 30) { (kitchen.capture.reads.last?.total ?? 0) >= Int(self.rate) }, "no kitchen")
        let livingRoom = try startMember("Living Room", on: .room2, shift: 7)
        XCTAssertNotNil(
            sender.waitForLine(containing: "Living Room joined the group", timeout: 20), "\(sender.output)")
        XCTAssertEqual(sender.waitForExit(timeout: 90), 0, "\(sender.output)")
        XCTAssertEqual(
            sender.output.filter { $0.hasPrefix("track ") }, ["track 1/2: \(first)", "track 2/2: \(second)"])
        _ = kitchen.capture.stop(atLeast: Int(rate) * 13)
        _ = livingRoom.capture.stop(atLeast: Int(rate) * 5)
        print("what the sender said:", sender.output.filter { $0.hasPrefix("cast:") })

        // One group: the living room joined once, and each castd had one connection from the sender.
        XCTAssertEqual(sender.output.filter { $0.contains("Living Room joined the group") }.count, 1)
        for member in [kitchen, livingRoom] {
            let connections = member.daemon.output.filter { $0.contains("connected from") }.count
            print("group queue: \(member.name) saw \(connections) sender connection(s)")
            XCTAssertEqual(connections, 1, "\(member.name): \(member.daemon.output.suffix(30))")
        }

        // The second file: each member's last stretch, the whole file, begun at the same instant.
        var starts: [Double] = []
        for member in [kitchen, livingRoom] {
            let parts = stretches(member.capture)
            let last = try XCTUnwrap(parts.last, "\(member.name) wrote nothing")
            let base = parts.count > 1 ? parts[parts.count - 2].last!.total : 0
            let bytes = (last.last?.total ?? 0) - base
            XCTAssertEqual(Double(bytes) / rate, 5, accuracy: 0.15, "\(member.name) played the second file whole")
            starts.append(try XCTUnwrap(streamStart(last, base: base), "\(member.name): too few reads"))
        }
        let apart = abs(starts[1] - starts[0])
        print(String(format: "group queue: the second file began %.3f ms apart on the two members", apart * 1000))
        XCTAssertLessThan(apart, 0.003, "the members began the second file apart")
    }

    /// `cast send http://…/beeps.flac --to Kitchen --to "Living Room"`: each castd opens the URL itself (the test's
    /// http server on the phone; `cast` serves nothing), and both play the whole file, begun at one instant.
    func testAURLPlaysOnAGroupEachMemberOpeningIt() throws {
        try requireTimeNamespaces()
        let length = 5
        _ = try beeps(seconds: length, name: "beeps.flac")
        let kitchen = try startMember("Kitchen", on: .room1, shift: 3)
        let livingRoom = try startMember("Living Room", on: .room2, shift: 7)
        let phone = lab.address(.phone)
        let url = try lab.serveOnPhone(work!) + "/beeps.flac"
        // A room reaches the phone only on its own link (docs: scripts/lab): one URL for both needs a route to the
        // phone's address on the box's link, through the phone's end of the room's link (inside the lab only).
        for room in [Lab.Host.room1, .room2] {
            let peer = lab.address(room).split(separator: ".").dropLast().joined(separator: ".") + ".2"
            let routed = try lab.run(on: room, ["ip", "route", "add", "\(phone)/32", "via", peer])
            XCTAssertEqual(routed.status, 0, routed.stderr)
        }
        let sender = try lab.start(
            on: .phone, [Paths.cast, "send", url, "--to", "Kitchen", "--to", "Living Room"],
            environment: ["XDG_CONFIG_HOME": "\(work!)/sender"])
        XCTAssertEqual(sender.waitForExit(timeout: 60), 0, "\(sender.output)")
        var starts: [Double] = []
        for member in [kitchen, livingRoom] {
            let reads = member.capture.stop(atLeast: Int(rate) * length)
            XCTAssertTrue(
                member.daemon.output.contains { $0.contains("plays \"\(url)\"") }, "\(member.daemon.output.suffix(8))")
            XCTAssertEqual(Double(reads.last?.total ?? 0) / rate, Double(length), accuracy: 0.1, "\(member.name)")
            starts.append(try XCTUnwrap(streamStart(reads, base: 0), "\(member.name): too few reads"))
        }
        let apart = abs(starts[1] - starts[0])
        print(String(format: "group URL: the members began %.3f ms apart", apart * 1000))
        XCTAssertLessThan(apart, 0.003)
    }
}
