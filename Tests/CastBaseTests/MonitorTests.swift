import CastBase
import Foundation
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
}
