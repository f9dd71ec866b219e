/// Receiver → sender: what the receiver is doing now.
public struct ReceiverStatus: Codable, Sendable, Equatable {
    /// The receiver's friendly name.
    public var name: String
    /// The receiver's id.
    public var id: String
    /// The playback state; `stopped` when idle.
    public var state: PlaybackState
    /// What plays, when something does.
    public var title: String?
    /// The position in seconds, when something plays.
    public var position: Double?
    /// The duration in seconds, when known.
    public var duration: Double?
    /// The output volume, 0...1.
    public var volume: Double?
    /// Whether the output is muted.
    public var muted: Bool?
    /// The load state (`stalled` while the input cannot keep up), when something plays.
    public var loadState: LoadState?
    /// The media time up to which media is buffered (as the `buffered` event), when something plays.
    public var playableDuration: Double?
    /// The input's rate as the receiver measures it (bits/s: the link, for served media), when something plays and
    /// it is known. Absent from receivers that predate it.
    public var linkRate: Double?
    /// The media's audio and subtitle tracks (the last `tracks` event), when something plays.
    public var tracks: [MediaTrack]?
    /// How far from its group's timeline the receiver was, and its rate's trim (the last `sync` event), while it
    /// plays in a group.
    public var sync: Sync?
    /// The group it plays in (the play request's `group`: its members' names as the sender gave them).
    public var group: [String]?
    /// Where what plays is in its sender's queue (the play request's `queue`).
    public var queue: QueuePlace?

    /// A group member's step (the `sync` event's fields).
    public struct Sync: Codable, Sendable, Equatable {
        /// Seconds ahead of the group's timeline (negative: behind), before the latest correction.
        public var offset: Double
        /// The trim of its clock's rate, parts per million.
        public var trim: Double
        /// True when the correction it wanted was out of range and is held (at the limit, or the last good one);
        /// absent otherwise.
        public var limited: Bool?

        /// Creates one.
        public init(offset: Double, trim: Double, limited: Bool? = nil) {
            self.offset = offset
            self.trim = trim
            self.limited = limited
        }
    }

    /// Creates a status.
    public init(
        name: String, id: String, state: PlaybackState, title: String? = nil, position: Double? = nil,
        duration: Double? = nil
    ) {
        self.name = name
        self.id = id
        self.state = state
        self.title = title
        self.position = position
        self.duration = duration
    }
}

extension ReceiverStatus: MessageBody {
    func check() throws(ProtocolError) {
        try checkText(name, field: "status.name")
        try checkText(title, field: "status.title")
        if let group {
            guard group.count <= PlayRequest.maximumGroupSize else {
                throw ProtocolError(.malformedMessage, "status.group names too many receivers")
            }
            for name in group { try checkText(name, field: "status.group") }
        }
        if let linkRate, !(linkRate.isFinite && linkRate >= 0) {
            throw ProtocolError(.malformedMessage, "status.linkRate must be a rate (bits/s)")
        }
        if let queue, !queue.isValid {
            throw ProtocolError(
                .malformedMessage, "status.queue must be 1 ≤ number ≤ count ≤ \(QueuePlace.maximumCount)")
        }
    }
}
