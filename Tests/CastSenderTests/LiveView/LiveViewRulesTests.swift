import CastProtocol
import CastSender
import XCTest

final class LiveViewRulesTests: XCTestCase {
    private func now(
        _ state: PlaybackState = .playing, at position: Double = 30, of duration: Double? = 120, volume: Double = 0.5,
        queue: Bool = false
    ) -> LiveViewRules.Now {
        LiveViewRules.Now(state: state, position: position, duration: duration, volume: volume, isQueue: queue)
    }

    /// Issue 34: ↑ at 90 % went to 10 % (min(1, …) applied before dividing by 10).
    func testUpRaisesTheVolumeByATenthAndStopsAtFull() {
        XCTAssertEqual(LiveViewRules.action(for: .up, now: now(volume: 0.9)), .control(.volume(1)))
        XCTAssertEqual(LiveViewRules.action(for: .up, now: now(volume: 1)), .control(.volume(1)))
        XCTAssertEqual(LiveViewRules.action(for: .up, now: now(volume: 0)), .control(.volume(0.1)))
        XCTAssertEqual(LiveViewRules.action(for: .up, now: now(volume: 0.5)), .control(.volume(0.6)))
        XCTAssertEqual(LiveViewRules.action(for: .up, now: now(volume: 0.7)), .control(.volume(0.8)))
    }

    func testDownLowersTheVolumeByATenthAndStopsAtSilence() {
        XCTAssertEqual(LiveViewRules.action(for: .down, now: now(volume: 1)), .control(.volume(0.9)))
        XCTAssertEqual(LiveViewRules.action(for: .down, now: now(volume: 0.5)), .control(.volume(0.4)))
        XCTAssertEqual(LiveViewRules.action(for: .down, now: now(volume: 0.1)), .control(.volume(0)))
        XCTAssertEqual(LiveViewRules.action(for: .down, now: now(volume: 0)), .control(.volume(0)))
    }

    /// Every level from 0 to 1 in steps: up ten times from silence is full, down ten times from full is silence,
    /// each step a tenth apart.
    func testTenStepsCrossTheWholeRange() {
        var level = 0.0
        for step in 1...12 {
            level = LiveViewRules.stepped(level, by: 1)
            XCTAssertEqual(level, min(1, Double(step) / 10), accuracy: 1e-12)
        }
        for step in 1...12 {
            level = LiveViewRules.stepped(level, by: -1)
            XCTAssertEqual(level, max(0, 1 - Double(step) / 10), accuracy: 1e-12)
        }
    }

    /// A level between tenths (set with `cast volume 0.45`) goes to the next tenth in the key's direction; a
    /// level a rounding error off a tenth counts as that tenth; a level the receiver sent out of range is clamped.
    func testLevelsBetweenTenthsAndOutOfRange() {
        XCTAssertEqual(LiveViewRules.stepped(0.45, by: 1), 0.5)
        XCTAssertEqual(LiveViewRules.stepped(0.45, by: -1), 0.4)
        XCTAssertEqual(LiveViewRules.stepped(0.1 + 0.2, by: 1), 0.4)
        XCTAssertEqual(LiveViewRules.stepped(0.30000001, by: -1), 0.2)
        XCTAssertEqual(LiveViewRules.stepped(7, by: 1), 1)
        XCTAssertEqual(LiveViewRules.stepped(-3, by: -1), 0)
        XCTAssertEqual(LiveViewRules.stepped(.nan, by: -1), 0.9)
    }

    func testArrowsSeekTenSecondsWithinTheFilm() {
        func seek(_ position: Double) -> LiveViewRules.Action { .control(.seek(position: position, exact: false)) }
        XCTAssertEqual(LiveViewRules.action(for: .right, now: now(at: 30)), seek(40))
        XCTAssertEqual(LiveViewRules.action(for: .left, now: now(at: 30)), seek(20))
        // At the start, ← stays at 0; near the end, → goes to the end (and the film finishes), not beyond it.
        XCTAssertEqual(LiveViewRules.action(for: .left, now: now(at: 4)), seek(0))
        XCTAssertEqual(LiveViewRules.action(for: .right, now: now(at: 115)), seek(120))
        // A stream with no known duration: forward as asked, within the wire's bound.
        XCTAssertEqual(LiveViewRules.action(for: .right, now: now(at: 50, of: nil)), seek(60))
        XCTAssertEqual(LiveViewRules.action(for: .right, now: now(at: 1e300, of: nil)), seek(1e7))
    }

    func testSpacePausesAndResumesAndQQuits() {
        XCTAssertEqual(LiveViewRules.action(for: .space, now: now(.playing)), .control(.pause))
        XCTAssertEqual(LiveViewRules.action(for: .space, now: now(.paused)), .control(.resume))
        XCTAssertEqual(LiveViewRules.action(for: .quit, now: now()), .quit)
    }

    /// n and p in a queue; p restarts a source played for more than 3 s, as music players do. Alone (cast send), n
    /// does nothing and p starts again.
    func testNextAndPrevious() {
        XCTAssertEqual(LiveViewRules.action(for: .next, now: now(queue: true)), .skip(.next))
        XCTAssertEqual(LiveViewRules.action(for: .next, now: now(queue: false)), .ignore)
        XCTAssertEqual(LiveViewRules.action(for: .previous, now: now(at: 2.9, queue: true)), .skip(.previous))
        XCTAssertEqual(LiveViewRules.action(for: .previous, now: now(at: 3, queue: true)), .skip(.previous))
        let restart = LiveViewRules.Action.control(.seek(position: 0, exact: true))
        XCTAssertEqual(LiveViewRules.action(for: .previous, now: now(at: 3.1, queue: true)), restart)
        XCTAssertEqual(LiveViewRules.action(for: .previous, now: now(at: 1, queue: false)), restart)
    }

    func testKeysFromTheTerminalsBytes() {
        func keys(_ text: [UInt8]) -> [LiveKey] {
            var pending: [UInt8] = []
            var found: [LiveKey] = []
            for byte in text {
                pending.append(byte)
                found += LiveKey.take(from: &pending)
            }
            return found
        }
        XCTAssertEqual(
            keys(Array(" qQnN>pP<".utf8)), [.space, .quit, .quit, .next, .next, .next, .previous, .previous, .previous])
        let arrows: [UInt8] = [0x1B, 0x5B, 0x41, 0x1B, 0x5B, 0x42, 0x1B, 0x4F, 0x43, 0x1B, 0x5B, 0x44]
        XCTAssertEqual(keys(arrows), [.up, .down, .right, .left])
        // Unknown keys (x, F1's tail, a lone ESC before q) are skipped, and the next key still counts.
        XCTAssertEqual(keys(Array("x".utf8) + [0x1B, 0x5B, 0x5A] + [0x1B] + Array("q".utf8)), [.quit])
    }
}
