import CastSender
import XCTest

final class PlayingOrderTests: XCTestCase {
    private func walk(_ order: inout PlayingOrder, _ endings: [PlayingOrder.Ending]) -> [Int?] {
        endings.map { order.advance(after: $0) }
    }

    func testWithoutRepeatTheQueueEndsAfterTheLast() {
        var order = PlayingOrder(count: 3, repeats: .none)
        XCTAssertEqual(order.current, 0)
        XCTAssertEqual(order.place?.number, 1)
        XCTAssertEqual(walk(&order, [.ended, .ended, .ended]), [1, 2, nil])
        XCTAssertNil(order.place)
        XCTAssertNil(order.advance(after: .ended))
    }

    /// Next at the last ends the queue; previous at the first plays the first again (MusicPlayerController).
    func testMovesAtTheEndsWithoutRepeat() {
        var order = PlayingOrder(count: 3, repeats: .none)
        XCTAssertEqual(
            walk(&order, [.moved(.previous), .moved(.next), .moved(.next), .moved(.previous)]), [0, 1, 2, 1])
        XCTAssertEqual(walk(&order, [.moved(.next), .moved(.next)]), [2, nil])
    }

    func testRepeatAllWrapsBothWays() {
        var order = PlayingOrder(count: 3, repeats: .all)
        XCTAssertEqual(walk(&order, [.moved(.previous)]), [2])
        XCTAssertEqual(walk(&order, [.moved(.next), .ended, .ended, .ended]), [0, 1, 2, 0])
        XCTAssertEqual(order.place?.number, 1)
        XCTAssertEqual(order.place?.count, 3)
    }

    /// Repeat one plays a source again when it ends by itself; a skip moves on, and ends the queue after the last.
    func testRepeatOneRepeatsUntilSkipped() {
        var order = PlayingOrder(count: 2, repeats: .one)
        XCTAssertEqual(walk(&order, [.ended, .ended, .moved(.next), .ended, .moved(.previous)]), [0, 0, 1, 1, 0])
        XCTAssertEqual(walk(&order, [.moved(.next), .moved(.next)]), [1, nil])
    }

    /// A round of repeat all in which nothing played ends the queue (broken files would loop for ever).
    func testARoundOfFailuresEndsRepeatAll() {
        var order = PlayingOrder(count: 2, repeats: .all)
        XCTAssertEqual(walk(&order, [.failed, .failed]), [1, nil])
        var played = PlayingOrder(count: 2, repeats: .all)
        XCTAssertEqual(walk(&played, [.ended, .failed, .failed, .failed]), [1, 0, 1, nil])
    }

    /// Shuffled: the order given first, a new one each round of repeat all, every source once per round.
    func testShuffleGivesEachRoundANewOrder() {
        var order = PlayingOrder(count: 3, repeats: .all, order: [2, 0, 1], reshuffle: { $0.reversed() })
        XCTAssertEqual(walk(&order, [.ended, .ended, .ended, .ended, .ended]), [0, 1, 1, 0, 2])
        XCTAssertEqual(order.order, [1, 0, 2])
    }
}
