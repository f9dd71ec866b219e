// Where a queue of sources is, and where it goes next: the music player's rules (CastKit's MusicPlayerController),
// pure, for cast queue.
public import CastProtocol

/// The order a queue plays its sources in and where it is: which source plays, and which comes after it ended, failed
/// or was skipped. The rules are those of CastKit's `MusicPlayerController` (and Apple's): repeat one plays a source
/// again when it ends by itself (a skip still moves on); repeat all starts a new round after the last (reshuffled
/// when shuffling); a round in which nothing played ends the queue (broken files would loop for ever).
public struct PlayingOrder: Sendable, Equatable {
    /// How a queue repeats.
    public enum Repeat: Sendable, Equatable {
        /// Each source once.
        case none
        /// The current source again each time it ends.
        case one
        /// The whole queue again after the last source.
        case all
    }

    /// How the current source ended.
    public enum Ending: Sendable, Equatable {
        /// It played to its end.
        case ended
        /// It could not be played.
        case failed
        /// The user moved (a key or a verb from elsewhere).
        case moved(QueueMove)
    }

    /// The sources' indices in playing order.
    public private(set) var order: [Int]
    /// Where in `order` the queue is; nil once it is over.
    public private(set) var position: Int?
    /// How it repeats.
    public let repeats: Repeat
    /// A new order for a new round (a shuffle), or nil to keep the order.
    private let reshuffle: (@Sendable ([Int]) -> [Int])?
    /// Whether a source played in this round.
    private var playedThisRound = false

    /// A queue of `count` sources (at least one) in `order`'s order (0..<count by default); with `reshuffle`, each new
    /// round of repeat all plays in the order it gives.
    public init(
        count: Int, repeats: Repeat, order: [Int]? = nil, reshuffle: (@Sendable ([Int]) -> [Int])? = nil
    ) {
        precondition(count > 0, "a queue has sources")
        self.order = order ?? Array(0..<count)
        precondition(self.order.sorted() == Array(0..<count), "an order plays every source once")
        self.repeats = repeats
        self.reshuffle = reshuffle
        position = 0
    }

    /// The index of the source that plays now; nil once the queue is over.
    public var current: Int? { position.map { order[$0] } }

    /// Where the queue is, for a person: (3, 12) for the third of twelve; nil once it is over.
    public var place: (number: Int, count: Int)? { position.map { ($0 + 1, order.count) } }

    /// Moves on after the current source ended as `ending`; the source to play next, or nil when the queue is over.
    public mutating func advance(after ending: Ending) -> Int? {
        guard let now = position else { return nil }
        switch ending {
        case .ended:
            playedThisRound = true
            if repeats == .one { return current }
            return step(from: now)
        case .failed:
            return step(from: now)
        case .moved(.next):
            playedThisRound = true
            return step(from: now)
        case .moved(.previous):
            playedThisRound = true
            if now > 0 {
                position = now - 1
            } else if repeats == .all {
                position = order.count - 1
            }
            return current
        }
    }

    /// The source after `now`: a new round after the last with repeat all (when something played in this one).
    private mutating func step(from now: Int) -> Int? {
        if now + 1 < order.count {
            position = now + 1
        } else if repeats == .all && playedThisRound {
            if let reshuffle { order = reshuffle(order) }
            position = 0
            playedThisRound = false
        } else {
            position = nil
        }
        return current
    }

    public static func == (lhs: PlayingOrder, rhs: PlayingOrder) -> Bool {
        lhs.order == rhs.order && lhs.position == rhs.position && lhs.repeats == rhs.repeats
            && lhs.playedThisRound == rhs.playedThisRound
    }
}
