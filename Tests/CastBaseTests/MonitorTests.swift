import CastBase
import Foundation
import Synchronization
import XCTest

/// `Monitor`: the one lock a thread can wait on. Each test would hang (caught by its bound) or fail if a change did not
/// wake a waiter, if a wait ignored its condition, or if a timeout did not end a wait.
final class MonitorTests: XCTestCase {
    func testAWaiterWakesWhenAnotherThreadMakesItsConditionTrue() {
        let queue = Monitor([Int]())
        let taken = expectation(description: "the consumer took every item in order")
        let consumer = Thread {
            var seen: [Int] = []
            while seen.count < 100 {
                seen.append(queue.withLock(when: { !$0.isEmpty }) { $0.removeFirst() })
            }
            XCTAssertEqual(seen, Array(0..<100))
            taken.fulfill()
        }
        consumer.start()
        for item in 0..<100 { queue.withLock { $0.append(item) } }
        wait(for: [taken], timeout: 10)
    }

    func testATimedWaitEndsAtItsTimeoutAndTheBodyStillRuns() {
        let flag = Monitor(false)
        let start = ContinuousClock.now
        let ran = flag.withLock(when: { $0 }, timeout: 0.1) { value -> String in
            value ? "ready" : "timed out"
        }
        let waited = ContinuousClock.now - start
        XCTAssertEqual(ran, "timed out")
        XCTAssertGreaterThanOrEqual(waited, .milliseconds(95))
        XCTAssertLessThan(waited, .seconds(5), "a wait must end at its timeout")
        XCTAssertFalse(flag.wait(until: { $0 }, timeout: 0))
    }

    func testAConditionAlreadyTrueDoesNotWait() {
        let flag = Monitor(true)
        let start = ContinuousClock.now
        XCTAssertTrue(flag.wait(until: { $0 }, timeout: 30))
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(1))
    }

    func testATimedWaitEndsEarlyWhenTheConditionBecomesTrue() {
        let flag = Monitor(false)
        let setter = Thread { flag.withLock { $0 = true } }
        setter.start()
        let start = ContinuousClock.now
        XCTAssertTrue(flag.wait(until: { $0 }, timeout: 30))
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(10), "woken by the change, not by the timeout")
    }

    /// `read` only looks, so it wakes nobody: a waiter's condition is evaluated once when it begins to wait and once
    /// when the change it waits for comes, not once for every look another thread takes (a paused output looked at by
    /// the position timer woke 28 times a second). `withLock` still wakes it (the test's own check of the count).
    func testAReadWakesNoWaiter() {
        let monitor = Monitor(0)
        let looks = Atomic<Int>(0)
        let began = expectation(description: "the waiter began to wait")
        let woke = expectation(description: "the waiter saw its change")
        Thread {
            monitor.wait(until: { value in
                if looks.add(1, ordering: .relaxed).newValue == 1 { began.fulfill() }
                return value == 1
            })
            woke.fulfill()
        }.start()
        wait(for: [began], timeout: 10)
        for _ in 0..<50 {
            XCTAssertEqual(monitor.read { $0 }, 0)
            Thread.sleep(forTimeInterval: 0.002)
        }
        XCTAssertEqual(looks.load(ordering: .relaxed), 1, "reads woke the waiter")
        for _ in 0..<5 {
            monitor.withLock { _ in }
            Thread.sleep(forTimeInterval: 0.002)
        }
        XCTAssertGreaterThan(looks.load(ordering: .relaxed), 1, "withLock did not wake the waiter")
        monitor.withLock { $0 = 1 }
        wait(for: [woke], timeout: 10)
    }
}
