import CastBase
import CastProtocol
import Foundation

/// What flows between two stages: items, then one end marker.
enum StageItem<Element: Sendable>: Sendable {
    /// One packet or frame.
    case item(Element)
    /// The producer has nothing more (end of input, after the decoder was drained).
    case end
}

/// A blocking FIFO between two threads, bounded by an item count and a byte budget, carrying a serial (ffplay's
/// `PacketQueue.serial`).
///
/// `put` blocks while the queue is full, `take` while it is empty; `abort()` wakes both for good. Every item is put
/// with the serial of the stretch of playback it belongs to; `flush(serial:)` (a seek) empties the queue and moves
/// it to a new serial, after which items put with an older serial are dropped at the door, so that no stage has to
/// lock another to flush it.
///
/// A packet queue also counts the media seconds it holds and reports its fill to the player's `PacketBudget`, which
/// paces the demux thread by duration as well (ffplay's `stream_has_enough_packets`).
final class BoundedQueue<Element: Sendable>: Sendable {
    /// What the queue holds, in its `Monitor`.
    private struct State {
        var items: [(item: StageItem<Element>, bytes: Int, seconds: Double, serial: Int)?] = []
        var head = 0
        var bytes = 0
        var seconds = 0.0
        var aborted = false
        var serial = 0

        var count: Int { items.count - head }

        /// Empties the queue.
        mutating func removeAll() {
            items.removeAll()
            head = 0
            bytes = 0
            seconds = 0
        }
    }

    private let state = Monitor(State())
    private let maxCount: Int
    private let maxBytes: Int
    /// Told the queue's fill after every change; nil for a queue that does not pace the demux thread.
    private let budget: PacketBudget?

    /// A queue holding at most `maxCount` items and, beyond its first item, at most `maxBytes` bytes; it reports its
    /// fill to `budget`.
    init(maxCount: Int, maxBytes: Int = .max, budget: PacketBudget? = nil) {
        self.maxCount = maxCount
        self.maxBytes = maxBytes
        self.budget = budget
        budget?.report(ObjectIdentifier(self), PacketBudget.Fill())
    }

    /// Whether an item is waiting to be taken (ffplay's `frame_queue_nb_remaining`): a late frame is dropped only when
    /// its successor is already there.
    var hasWaitingItem: Bool { state.withLock { $0.count > 0 } }

    /// Appends `item` of `serial` (`seconds` of media), waiting for room; an item whose serial is not the queue's
    /// (flushed while it was made or while it waited) is dropped. Returns false when the queue was aborted.
    @discardableResult
    func put(_ item: StageItem<Element>, serial itemSerial: Int, bytes size: Int = 0, seconds length: Double = 0)
        -> Bool
    {
        // The end marker never waits: a producer must always be able to finish.
        let waits: Bool
        if case .item = item { waits = true } else { waits = false }
        let maxCount = maxCount
        let maxBytes = maxBytes
        let room = { (state: State) in
            !waits || state.aborted || itemSerial != state.serial || state.count == 0
                || (state.count < maxCount && state.bytes + size <= maxBytes)
        }
        return state.withLock(when: room) { state in
            guard !state.aborted else { return false }
            guard itemSerial == state.serial else { return true }
            state.items.append((item, size, length, itemSerial))
            state.bytes += size
            state.seconds += length
            report(state)
            return true
        }
    }

    /// Removes the oldest item and returns it with its serial, waiting for one; nil when the queue was aborted.
    func take() -> (item: StageItem<Element>, serial: Int)? {
        state.withLock(when: { $0.aborted || $0.count > 0 }) { state in
            guard !state.aborted else { return nil }
            guard let entry = state.items[state.head] else { preconditionFailure("queue slot taken twice") }
            // Release the slot now: a frame must not outlive its turn in the queue.
            state.items[state.head] = nil
            state.head += 1
            state.bytes -= entry.bytes
            state.seconds = state.count == 0 ? 0 : max(state.seconds - entry.seconds, 0)
            report(state)
            if state.head > 64 && state.head * 2 > state.items.count {
                state.items.removeFirst(state.head)
                state.head = 0
            }
            return (entry.item, entry.serial)
        }
    }

    /// Drops every item and moves to `newSerial`: a producer blocked on a full queue wakes, and whatever it or
    /// anyone else puts with an older serial from now on is dropped.
    func flush(serial newSerial: Int) {
        state.withLock { state in
            state.removeAll()
            state.serial = newSerial
            report(state)
        }
    }

    /// Wakes every waiter; later `put` and `take` calls return at once.
    func abort() {
        state.withLock { state in
            state.aborted = true
            state.removeAll()
            report(state)
        }
    }

    /// Tells the budget what the queue holds now. Call inside the monitor.
    private func report(_ state: State) {
        budget?.report(ObjectIdentifier(self), PacketBudget.Fill(packets: state.count, seconds: state.seconds))
    }
}
