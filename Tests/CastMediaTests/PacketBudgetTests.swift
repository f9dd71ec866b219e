import Foundation
import XCTest

@testable import CastMedia

/// The demux thread reads on while any stream is short of packets (at most 25 queued, or at most 3 s of media), and
/// waits once every stream has more of both, as ffplay's `stream_has_enough_packets` (with 3 s where ffplay keeps
/// 1 s, above the buffering rule's 2 s refill). Before, it read until a queue's byte bound: a whole 20 s 1080p clip sat
/// in the worker as packets.
final class PacketBudgetTests: XCTestCase {
    private typealias Fill = PacketBudget.Fill

    func testReadsOnWhileAnyStreamIsShort() {
        let enough = Fill(packets: 90, seconds: 3.1)
        XCTAssertTrue(PacketBudget.readsOn([Fill](), minimumSeconds: 3))
        XCTAssertTrue(
            PacketBudget.readsOn([Fill(packets: 25, seconds: 10)], minimumSeconds: 3), "25 packets are not more than 25"
        )
        XCTAssertTrue(
            PacketBudget.readsOn([Fill(packets: 200, seconds: 3.0)], minimumSeconds: 3), "3 s are not more than 3 s")
        XCTAssertTrue(
            PacketBudget.readsOn([enough, Fill(packets: 3, seconds: 0.06)], minimumSeconds: 3), "the audio is short")
        XCTAssertFalse(PacketBudget.readsOn([enough], minimumSeconds: 3))
        XCTAssertFalse(PacketBudget.readsOn([enough, Fill(packets: 150, seconds: 3.2)], minimumSeconds: 3))
    }

    func testPacketsWithoutDurationsAreReadUpToTheQueuesBounds() {
        // No durations: never enough by time, so the queue's own count and byte bounds pace the demux thread.
        XCTAssertTrue(PacketBudget.readsOn([Fill(packets: 4000, seconds: 0)], minimumSeconds: 3))
    }

    func testAQueueReportsWhatItHoldsAndTheDemuxThreadWaitsUntilAStageTakesSome() {
        let budget = PacketBudget(minimumSeconds: 3)
        let queue = BoundedQueue<Int>(maxCount: 4096, maxBytes: 1 << 20, budget: budget)
        // 25 packets of 0.125 s: 3.125 s, but not more than 25 packets: still short.
        for n in 0..<25 { queue.put(.item(n), serial: 0, bytes: 10, seconds: 0.125) }
        XCTAssertFalse(budget.waitUntilShort(), "25 packets are not enough yet")
        queue.put(.item(25), serial: 0, bytes: 10, seconds: 0.125)

        let waited = expectation(description: "the demux thread waited, then went on")
        let thread = Thread {
            XCTAssertTrue(budget.waitUntilShort())
            waited.fulfill()
        }
        thread.start()
        Thread.sleep(forTimeInterval: 0.1)
        // The decoder takes one: 25 packets again, short.
        XCTAssertNotNil(queue.take())
        wait(for: [waited], timeout: 5)
    }

    /// An expectation fulfilled once a thread of its own, waiting in `budget.waitUntilShort()` as the demux thread
    /// does, goes on.
    private func waiterWoken(from budget: PacketBudget, _ description: String) -> XCTestExpectation {
        let woken = expectation(description: description)
        Thread {
            _ = budget.waitUntilShort()
            woken.fulfill()
        }.start()
        return woken
    }

    func testASeekFlushAndTheShutdownWakeTheDemuxThread() {
        let budget = PacketBudget(minimumSeconds: 3)
        let queue = BoundedQueue<Int>(maxCount: 4096, budget: budget)
        for n in 0..<40 { queue.put(.item(n), serial: 0, seconds: 0.1) }
        let flushed = waiterWoken(from: budget, "woken by the flush")
        Thread.sleep(forTimeInterval: 0.05)
        queue.flush(serial: 1)
        wait(for: [flushed], timeout: 5)

        for n in 0..<40 { queue.put(.item(n), serial: 1, seconds: 0.1) }
        let aborted = waiterWoken(from: budget, "woken by the shutdown")
        Thread.sleep(forTimeInterval: 0.05)
        budget.abort()
        wait(for: [aborted], timeout: 5)
    }
}
