/// The reads a reader of served media has sent and not had answered yet, on a connection whose peer answers them one
/// after another in the order they came (a media connection, docs/protocol.md; castd's channel to its decoder
/// worker), and the check of every answer against them.
///
/// A reader keeps several reads in flight so that the peer reads and sends the next range while this side still
/// receives the last: one read at a time costs a round trip per range, which is most of the time on a fast link.
/// Requests carry their offsets and answers come in order, so each answer is matched against the oldest read: an
/// answer at another offset, longer than asked, or with nothing asked is the peer breaking the protocol, refused
/// here before a byte of it is stored, so the memory it can make a reader hold stays `limit` reads.
///
/// Value in, value out: no I/O. Thread-safety: a value; its owner guards it.
public struct MediaReadsInFlight: Sendable, Equatable {
    /// The most reads in flight at once.
    public let limit: Int
    /// The reads sent and not answered, oldest first.
    public private(set) var reads: [MediaRead] = []

    /// No read in flight yet; at most `limit` (≥ 1) at once.
    public init(limit: Int) {
        precondition(limit >= 1, "a reader keeps at least one read in flight")
        self.limit = limit
    }

    /// Whether another read may be sent now.
    public var isFull: Bool { reads.count >= limit }

    /// Whether a read of `resource` starting at `offset` is in flight.
    public func contains(offset: Int64, resource: Int = MediaRead.media) -> Bool {
        reads.contains { $0.offset == offset && ($0.resource ?? MediaRead.media) == resource }
    }

    /// Records `read` as sent (the caller sends it). Our own bookkeeping: never more than `limit`.
    public mutating func sent(_ read: MediaRead) {
        precondition(!isFull, "more than \(limit) reads in flight")
        reads.append(read)
    }

    /// Takes the read that an answer of `count` bytes at `offset` answers: the oldest one.
    /// - Throws: `ProtocolError` `.unexpectedMessage` when no read is in flight or the oldest starts elsewhere (an
    ///   answer out of order, or to a read never asked for), `.malformedMessage` when it is longer than asked.
    public mutating func answer(offset: Int64, count: Int) throws(ProtocolError) -> MediaRead {
        guard let oldest = reads.first else {
            throw ProtocolError(.unexpectedMessage, "an answer at \(offset) to no read in flight")
        }
        guard offset == oldest.offset else {
            throw ProtocolError(
                .unexpectedMessage, "an answer at \(offset) where the oldest read in flight is at \(oldest.offset)")
        }
        guard count >= 0, count <= oldest.length else {
            throw ProtocolError(
                .malformedMessage, "\(count) bytes answer a read of \(oldest.length) at \(oldest.offset)")
        }
        reads.removeFirst()
        return oldest
    }

    /// Takes the read that a failure answers (the sender's `error`, castd's `readFailed`): the oldest one.
    /// - Throws: `ProtocolError` `.unexpectedMessage` when no read is in flight.
    public mutating func fail() throws(ProtocolError) -> MediaRead {
        guard let oldest = reads.first else {
            throw ProtocolError(.unexpectedMessage, "a failed read when no read is in flight")
        }
        reads.removeFirst()
        return oldest
    }

    /// The reads to send now for a reader that reads the media in order from `position`, `length` bytes a time, so
    /// that the next `depth` ranges are in flight or arrived (`arrived`: the start and length of answers that came
    /// and were not taken yet), within the free places and not past `size` (when known). Ranges already in flight
    /// or arrived are skipped, whatever their lengths.
    public func ahead(
        of position: Int64, length: Int, depth: Int, size: Int64?, arrived: [(offset: Int64, count: Int)] = []
    ) -> [MediaRead] {
        precondition(length >= 1 && length <= MediaRead.maximumLength, "a read of 1 byte to the longest read")
        var planned: [MediaRead] = []
        var next = position
        var free = limit - reads.count
        for _ in 0..<depth {
            if let size, next >= size { break }
            if let known = arrived.first(where: { $0.offset == next }) {
                // An empty answer is the end of the media: nothing after it to ask for.
                guard known.count > 0 else { break }
                next += Int64(known.count)
            } else if let sent = reads.first(where: { $0.offset == next && $0.resource == nil }) {
                next += Int64(sent.length)
            } else {
                guard free > 0 else { break }
                let count = size.map { Int(min(Int64(length), $0 - next)) } ?? length
                planned.append(MediaRead(offset: next, length: count))
                free -= 1
                next += Int64(count)
            }
        }
        return planned
    }
}
