import Foundation

/// What flows between two stages: items, then one end marker.
enum StageItem<Element: Sendable>: Sendable {
    /// One packet or frame.
    case item(Element)
    /// The producer has nothing more (end of input, after the decoder was drained).
    case end
}

/// A blocking FIFO between two threads, bounded by an item count and a byte budget.
///
/// `put` blocks while the queue is full, `take` while it is empty; `abort()` wakes both for good.
final class BoundedQueue<Element: Sendable>: @unchecked Sendable {
    // Invariant: every stored property below is read and written only while `condition` is locked.
    private let condition = NSCondition()
    private var items: [(StageItem<Element>, Int)?] = []
    private var head = 0
    private var bytes = 0
    private var aborted = false
    private let maxCount: Int
    private let maxBytes: Int

    /// A queue holding at most `maxCount` items and, beyond its first item, at most `maxBytes` bytes.
    init(maxCount: Int, maxBytes: Int = .max) {
        self.maxCount = maxCount
        self.maxBytes = maxBytes
    }

    private var count: Int { items.count - head }

    /// Appends `item`, waiting for room; returns false when the queue was aborted.
    @discardableResult
    func put(_ item: StageItem<Element>, bytes size: Int = 0) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        // The end marker never waits: a producer must always be able to finish.
        if case .item = item {
            while !aborted && count > 0 && (count >= maxCount || bytes + size > maxBytes) { condition.wait() }
        }
        guard !aborted else { return false }
        items.append((item, size))
        bytes += size
        condition.broadcast()
        return true
    }

    /// Removes the oldest item, waiting for one; nil when the queue was aborted.
    func take() -> StageItem<Element>? {
        condition.lock()
        defer { condition.unlock() }
        while !aborted && count == 0 { condition.wait() }
        guard !aborted else { return nil }
        guard let (item, size) = items[head] else { preconditionFailure("queue slot taken twice") }
        // Release the slot now: a frame must not outlive its turn in the queue.
        items[head] = nil
        head += 1
        bytes -= size
        if head > 64 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        condition.broadcast()
        return item
    }

    /// Wakes every waiter; later `put` and `take` calls return at once.
    func abort() {
        condition.lock()
        aborted = true
        items.removeAll()
        head = 0
        bytes = 0
        condition.broadcast()
        condition.unlock()
    }
}
