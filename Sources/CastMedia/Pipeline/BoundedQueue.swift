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
final class BoundedQueue<Element: Sendable>: @unchecked Sendable {
    // Invariant: every stored property below is read and written only while `condition` is locked.
    private let condition = NSCondition()
    private var items: [(item: StageItem<Element>, bytes: Int, seconds: Double, serial: Int)?] = []
    private var head = 0
    private var bytes = 0
    private var seconds = 0.0
    private var aborted = false
    private var serial = 0
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

    private var count: Int { items.count - head }

    /// Whether an item is waiting to be taken (ffplay's `frame_queue_nb_remaining`): a late frame is dropped only when
    /// its successor is already there.
    var hasWaitingItem: Bool {
        condition.lock()
        defer { condition.unlock() }
        return count > 0
    }

    /// Appends `item` of `serial` (`seconds` of media), waiting for room; an item whose serial is not the queue's
    /// (flushed while it was made or while it waited) is dropped. Returns false when the queue was aborted.
    @discardableResult
    func put(_ item: StageItem<Element>, serial itemSerial: Int, bytes size: Int = 0, seconds length: Double = 0)
        -> Bool
    {
        condition.lock()
        defer { condition.unlock() }
        // The end marker never waits: a producer must always be able to finish.
        if case .item = item {
            while !aborted && itemSerial == serial && count > 0 && (count >= maxCount || bytes + size > maxBytes) {
                condition.wait()
            }
        }
        guard !aborted else { return false }
        guard itemSerial == serial else { return true }
        items.append((item, size, length, itemSerial))
        bytes += size
        seconds += length
        reportLocked()
        condition.broadcast()
        return true
    }

    /// Removes the oldest item and returns it with its serial, waiting for one; nil when the queue was aborted.
    func take() -> (item: StageItem<Element>, serial: Int)? {
        condition.lock()
        defer { condition.unlock() }
        while !aborted && count == 0 { condition.wait() }
        guard !aborted else { return nil }
        guard let entry = items[head] else { preconditionFailure("queue slot taken twice") }
        // Release the slot now: a frame must not outlive its turn in the queue.
        items[head] = nil
        head += 1
        bytes -= entry.bytes
        seconds = count == 0 ? 0 : max(seconds - entry.seconds, 0)
        reportLocked()
        if head > 64 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        condition.broadcast()
        return (entry.item, entry.serial)
    }

    /// Drops every item and moves to `newSerial`: a producer blocked on a full queue wakes, and whatever it or
    /// anyone else puts with an older serial from now on is dropped.
    func flush(serial newSerial: Int) {
        condition.lock()
        items.removeAll()
        head = 0
        bytes = 0
        seconds = 0
        serial = newSerial
        reportLocked()
        condition.broadcast()
        condition.unlock()
    }

    /// Wakes every waiter; later `put` and `take` calls return at once.
    func abort() {
        condition.lock()
        aborted = true
        items.removeAll()
        head = 0
        bytes = 0
        seconds = 0
        reportLocked()
        condition.broadcast()
        condition.unlock()
    }

    /// Tells the budget what the queue holds now. Call with `condition` locked.
    private func reportLocked() {
        budget?.report(ObjectIdentifier(self), PacketBudget.Fill(packets: count, seconds: seconds))
    }
}
