import CastDiscovery
import Foundation
import XCTest

/// Browsing in the two-host lab: what `Browser` on the phone finds of a service published on the box.
final class BrowserTests: DiscoveryLabTestCase {
    /// Publishes on `host` and waits until it is established.
    private func publish(_ ad: ServiceAdvertisement, on host: LabFixture.Host) throws {
        let log = EventLog()
        lab!.useBus(of: host)
        let advertiser = Advertiser(ad) { log.append($0) }
        advertisers.append(advertiser)
        advertiser.start()
        XCTAssertNotNil(log.wait { $0 == .published(name: ad.name) }, "events: \(log.all)")
    }

    func testFindsAndResolvesAServiceOnTheOtherHost() throws {
        let lab = try XCTUnwrap(lab)
        try publish(Fixtures.livingRoom, on: .box)
        // Not switched before: an Advertiser that reconnects would follow the link to the phone.
        lab.useBus(of: .phone)

        let started = ContinuousClock.now
        let found = try Browser.browse(timeout: .seconds(5))
        let took = ContinuousClock.now - started
        XCTAssertEqual(
            found,
            [
                DiscoveredReceiver(
                    name: "Living Room", host: lab.hostName(.box), address: try lab.address(.box), port: 7000,
                    txt: Fixtures.txt)
            ])
        XCTAssertGreaterThanOrEqual(took, .milliseconds(900), "returned before min(timeout, 1 s)")
        XCTAssertLessThan(took, .seconds(3), "did not return early after ALL_FOR_NOW")
        print("browse from the phone: \(found.count) receiver(s) in \(took)")
    }

    /// A browse that another browse has made pointless (`cast send --to NAME` found NAME among the Cast receivers while
    /// the speakers are still being listed) ends as soon as it is cancelled, not after `min(timeout, 1 s)`; a browse
    /// started with a cancellation already cancelled does not wait at all.
    func testACancelledBrowseReturnsAtOnce() throws {
        let lab = try XCTUnwrap(lab)
        try publish(Fixtures.livingRoom, on: .box)
        lab.useBus(of: .phone)
        let cancellation = BrowseCancellation()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(100)) { cancellation.cancel() }
        let started = ContinuousClock.now
        let found = try Browser.browse(serviceType: "_raop._tcp", timeout: .seconds(5), cancellation: cancellation)
        let took = ContinuousClock.now - started
        XCTAssertEqual(found, [])
        // Bounds below the 1 s a browse that missed its cancellation waits, with room for a loaded machine.
        XCTAssertLessThan(took, .milliseconds(950), "the browse waited out its time after the cancellation")
        let again = ContinuousClock.now
        XCTAssertEqual(try Browser.browse(timeout: .seconds(5), cancellation: cancellation), [])
        XCTAssertLessThan(ContinuousClock.now - again, .milliseconds(900))
        print("cancelled browse returned after \(took)")
    }

    /// A watch sees a service appear, and disappear when it is withdrawn; cancelling ends it with no error.
    func testWatchFollowsAServiceComingAndGoing() throws {
        let lab = try XCTUnwrap(lab)
        try publish(Fixtures.livingRoom, on: .box)
        lab.useBus(of: .phone)
        let seen = WatchLog()
        let watch = try Browser.watch(onEvent: { seen.append($0) }, onEnd: { seen.end($0) })
        XCTAssertNotNil(seen.wait { $0.count == 1 }, "\(seen.events)")
        XCTAssertEqual(
            seen.events.first,
            .appeared(
                DiscoveredReceiver(
                    name: "Living Room", host: lab.hostName(.box), address: try lab.address(.box), port: 7000,
                    txt: Fixtures.txt)))
        advertisers.removeFirst().stop()
        XCTAssertNotNil(seen.wait { $0.count == 2 }, "\(seen.events)")
        XCTAssertEqual(seen.events.last, .disappeared(name: "Living Room"))
        watch.cancel()
        XCTAssertNotNil(seen.wait(timeout: 2) { _ in seen.ended }, "the watch did not end")
        XCTAssertNil(seen.endError)
    }

    func testFindsSeveralReceiversSortedByName() throws {
        let lab = try XCTUnwrap(lab)
        try publish(Fixtures.livingRoom, on: .box)
        try publish(ServiceAdvertisement(name: "Kitchen", port: 7001, txt: ["v": "1"]), on: .phone)
        lab.useBus(of: .phone)
        let found = try Browser.browse(timeout: .seconds(3))
        XCTAssertEqual(found.map(\.name), ["Kitchen", "Living Room"])
        XCTAssertEqual(found.map(\.address), [try lab.address(.phone), try lab.address(.box)])
        XCTAssertEqual(found.first?.txt, ["v": "1"])
    }

    func testShortTimeoutIsHonoured() throws {
        lab!.useBus(of: .phone)
        let started = ContinuousClock.now
        XCTAssertEqual(try Browser.browse(timeout: .milliseconds(300)), [])
        let took = ContinuousClock.now - started
        XCTAssertLessThan(took, .milliseconds(950), "it waited for the 1 s browse instead of its 300 ms")
    }

    func testWithoutDaemonThrowsPromptly() throws {
        let lab = try XCTUnwrap(lab)
        try lab.run("avahi-stop", "phone")
        lab.useBus(of: .phone)
        try assertThrowsDaemonNotRunningPromptly()
    }

    func testWithoutBusThrowsPromptly() throws {
        lab!.useMissingBus()
        try assertThrowsDaemonNotRunningPromptly()
    }

    private func assertThrowsDaemonNotRunningPromptly(file: StaticString = #filePath, line: UInt = #line) throws {
        let started = ContinuousClock.now
        XCTAssertThrowsError(try Browser.browse(timeout: .seconds(10)), file: file, line: line) { error in
            XCTAssertEqual(error as? DiscoveryError, .daemonNotRunning, file: file, line: line)
            let message = "\(error)"
            XCTAssertTrue(message.hasPrefix("avahi-daemon is not running ("), message, file: file, line: line)
            XCTAssertTrue(message.hasSuffix("): use --to HOST:PORT"), message, file: file, line: line)
            print("no daemon: \(message)")
        }
        let took = ContinuousClock.now - started
        XCTAssertLessThan(took, .seconds(2), file: file, line: line)
        print("no daemon: browse threw after \(took)")
    }
}

private enum Fixtures {
    static let txt = ["v": "1", "id": "3f:a9:0c:71", "fn": "Living Room", "ft": "video,audio", "auth": "pin"]
    static let livingRoom = ServiceAdvertisement(name: "Living Room", port: 7000, txt: txt)
}

/// What a watch reported, for the test's thread.
final class WatchLog: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [BrowseEvent] = []
    private var finished = false
    private var error: (any Error)?

    func append(_ event: BrowseEvent) { lock.withLock { list.append(event) } }
    func end(_ error: (any Error)?) {
        lock.withLock {
            finished = true
            self.error = error
        }
    }
    var events: [BrowseEvent] { lock.withLock { list } }
    var ended: Bool { lock.withLock { finished } }
    var endError: (any Error)? { lock.withLock { error } }

    /// Waits until `done` holds for the events; returns them, or nil after `timeout` seconds.
    func wait(timeout: Double = 10, _ done: ([BrowseEvent]) -> Bool) -> [BrowseEvent]? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let now = events
            if done(now) { return now }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return nil
    }
}
