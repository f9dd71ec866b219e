import CastDiscovery
import Foundation
import XCTest

/// Publishing in the two-host lab: what the phone sees of an Advertiser running against the box's avahi-daemon.
final class AdvertiserTests: DiscoveryLabTestCase {
    private func advertise(_ ad: ServiceAdvertisement = Fixtures.livingRoom, on host: LabFixture.Host) -> EventLog {
        let log = EventLog()
        lab!.useBus(of: host)
        let advertiser = Advertiser(ad) { log.append($0) }
        advertisers.append(advertiser)
        advertiser.start()
        return log
    }

    func testPublishedServiceIsSeenFromTheOtherHostWithItsTXTRecord() throws {
        let lab = try XCTUnwrap(lab)
        let log = advertise(on: .box)
        XCTAssertNotNil(log.wait { $0 == .published(name: "Living Room") }, "events: \(log.all)")

        let seen = try lab.avahiBrowse(from: .phone)
        XCTAssertEqual(seen.count, 1, "\(seen)")
        let service = try XCTUnwrap(seen.first)
        XCTAssertEqual(service.name, "Living Room")
        XCTAssertEqual(service.host, lab.hostName(.box))
        XCTAssertEqual(service.address, try lab.address(.box))
        XCTAssertEqual(service.port, 7000)
        XCTAssertEqual(service.txt, Set(Fixtures.txt.map { "\($0.key)=\($0.value)" }))
    }

    func testUpdatedTXTRecordReachesTheOtherHost() throws {
        let lab = try XCTUnwrap(lab)
        let log = advertise(on: .box)
        XCTAssertNotNil(log.wait { $0 == .published(name: "Living Room") }, "events: \(log.all)")
        var txt = Fixtures.txt
        txt["auth"] = "none"
        txt["fn"] = "Salon d'été"
        advertisers[0].update(txt: txt)

        // The update is announced at once, but give the phone's cache a moment before asking it.
        let deadline = ContinuousClock.now + .seconds(5)
        var seen: [BrowsedService] = []
        repeat {
            seen = try lab.avahiBrowse(from: .phone)
        } while seen.first?.txt.contains("auth=none") != true && ContinuousClock.now < deadline
        XCTAssertEqual(seen.first?.txt, Set(txt.map { "\($0.key)=\($0.value)" }))

        lab.useBus(of: .phone)
        XCTAssertEqual(try Browser.browse(timeout: .seconds(3)).first?.txt, txt)
    }

    func testPublishesAgainAfterTheDaemonRestarts() throws {
        let lab = try XCTUnwrap(lab)
        let log = advertise(on: .box)
        XCTAssertNotNil(log.wait { $0 == .published(name: "Living Room") }, "events: \(log.all)")

        let mark = log.count
        let restarted = ContinuousClock.now
        try lab.run("avahi-restart", "box")
        let daemonRunning = ContinuousClock.now - restarted
        let republished = try XCTUnwrap(
            log.wait(from: mark, timeout: .seconds(5)) { $0 == .published(name: "Living Room") },
            "events: \(log.all)")
        XCTAssertTrue(log.all.dropFirst(mark).contains { if case .daemonUnavailable = $0 { true } else { false } })

        var visible = false
        while !visible && ContinuousClock.now - restarted < .seconds(5) {
            visible = try lab.avahiBrowse(from: .phone).contains { $0.name == "Living Room" }
        }
        let visibleAfter = ContinuousClock.now - restarted
        XCTAssertTrue(visible, "not visible from the phone 5 s after the restart")
        print(
            "re-publish: daemon running again after \(daemonRunning), .published after \(republished.time - restarted),"
                + " seen from the phone (avahi-browse -t, itself ≈1 s) after \(visibleAfter)")
    }

    func testCollisionWithTheOtherHostRenames() throws {
        let boxLog = advertise(on: .box)
        XCTAssertNotNil(boxLog.wait { $0 == .published(name: "Living Room") }, "events: \(boxLog.all)")
        let phoneLog = advertise(on: .phone)
        XCTAssertNotNil(
            phoneLog.wait { $0 == .renamed(from: "Living Room", to: "Living Room #2") }, "events: \(phoneLog.all)")
        XCTAssertNotNil(phoneLog.wait { $0 == .published(name: "Living Room #2") }, "events: \(phoneLog.all)")
        XCTAssertFalse(boxLog.all.contains { if case .renamed = $0 { true } else { false } }, "\(boxLog.all)")

        let names = Set(try lab!.avahiBrowse(from: .phone).map(\.name))
        XCTAssertEqual(names, ["Living Room", "Living Room #2"])
    }

    func testCollisionOnTheSameHostRenames() throws {
        let first = advertise(on: .box)
        XCTAssertNotNil(first.wait { $0 == .published(name: "Living Room") }, "events: \(first.all)")
        // A second receiver on the same host: same name, other port. (Identical records would not collide:
        // avahi takes them for the same service.)
        var other = Fixtures.livingRoom
        other.port = 7002
        let second = advertise(other, on: .box)
        XCTAssertNotNil(
            second.wait { $0 == .renamed(from: "Living Room", to: "Living Room #2") }, "events: \(second.all)")
        XCTAssertNotNil(second.wait { $0 == .published(name: "Living Room #2") }, "events: \(second.all)")
    }

    func testWithoutDaemonReportsUnavailableThenPublishesWhenItAppears() throws {
        let lab = try XCTUnwrap(lab)
        try lab.run("avahi-stop", "box")
        let started = ContinuousClock.now
        let log = advertise(on: .box)
        let unavailable = log.wait(timeout: .seconds(2)) { if case .daemonUnavailable = $0 { true } else { false } }
        XCTAssertNotNil(unavailable, "events: \(log.all)")
        if let unavailable { print("no daemon: .daemonUnavailable after \(unavailable.time - started)") }

        try lab.run("avahi-start", "box")
        XCTAssertNotNil(log.wait { $0 == .published(name: "Living Room") }, "events: \(log.all)")
    }

    func testWithoutBusReportsUnavailable() throws {
        lab!.useMissingBus()
        let log = EventLog()
        let advertiser = Advertiser(Fixtures.livingRoom) { log.append($0) }
        advertisers.append(advertiser)
        advertiser.start()
        XCTAssertNotNil(
            log.wait(timeout: .seconds(2)) { if case .daemonUnavailable = $0 { true } else { false } },
            "events: \(log.all)")
        advertiser.stop()
        advertiser.stop()
    }

    func testStopWithdrawsTheService() throws {
        let lab = try XCTUnwrap(lab)
        let log = advertise(on: .box)
        XCTAssertNotNil(log.wait { $0 == .published(name: "Living Room") }, "events: \(log.all)")
        XCTAssertEqual(try lab.avahiBrowse(from: .phone).count, 1)
        advertisers[0].stop()
        // Goodbye packets (TTL 0) make the phone drop the records about a second later (RFC 6762 §10.1).
        let deadline = ContinuousClock.now + .seconds(5)
        var seen: [BrowsedService]
        repeat {
            seen = try lab.avahiBrowse(from: .phone)
        } while !seen.isEmpty && ContinuousClock.now < deadline
        XCTAssertEqual(seen, [])
    }
}

private enum Fixtures {
    static let txt = [
        "v": "1", "id": "3f:a9:0c:71:5e:22:b8:d4", "fn": "Living Room", "ft": "video,audio,pin", "auth": "pin",
    ]
    static let livingRoom = ServiceAdvertisement(name: "Living Room", port: 7000, txt: txt)
}
