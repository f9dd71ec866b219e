/// A move through a queue of sources that a user asks for (wire: the `direction` of a `skip` control and of a
/// `skipRequest` event; the raw values are the wire words).
public enum QueueMove: String, Codable, Sendable, Equatable, CaseIterable {
    /// The next source; after the last, the first with repeat all, otherwise the end of the queue.
    case next
    /// The previous source; before the first, the last with repeat all, otherwise the first again. (A sender that
    /// has played the current source for more than a few seconds goes back to its start instead.)
    case previous
}

/// Where a source plays in its sender's queue (wire: `queue` of `play` and of `status`, `{"number":3,"count":12}`):
/// shown by `status`, and what tells `cast next` that a queue plays. 1 ≤ `number` ≤ `count` ≤ `maximumCount`.
public struct QueuePlace: Codable, Sendable, Equatable {
    /// Which source this is, from 1.
    public var number: Int
    /// How many sources the queue has.
    public var count: Int

    /// The most sources a queue place counts.
    public static let maximumCount = 100_000

    /// Creates one.
    public init(number: Int, count: Int) {
        self.number = number
        self.count = count
    }

    /// Whether the numbers are within bounds.
    public var isValid: Bool { count <= Self.maximumCount && number >= 1 && number <= count }
}
