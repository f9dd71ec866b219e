/// An output thread's view of its frame queue: frames of the segment it plays, the segment's end, or word that a
/// seek began a newer segment (ffplay's check of a frame's serial against the queue's).
struct SegmentReader {
    /// What `next()` found.
    enum Read {
        /// The next frame of the current segment.
        case item(Frame)
        /// The current segment has no more frames.
        case end
        /// A seek began a newer segment; `segment` is now that one, and its frames follow.
        case superseded
    }

    private let frames: BoundedQueue<Frame>
    private let control: PlaybackControl
    /// The segment being played.
    private(set) var segment: PlaybackControl.Segment
    /// An item of the newer segment, taken while finding out that the current one was superseded.
    private var held: (item: StageItem<Frame>, serial: Int)?

    init(frames: BoundedQueue<Frame>, control: PlaybackControl) {
        self.frames = frames
        self.control = control
        self.segment = control.segment
    }

    /// The next item; nil when the queue was aborted (stopping). Items of older segments are dropped.
    mutating func next() -> Read? {
        while true {
            guard let (item, serial) = held ?? frames.take() else { return nil }
            held = nil
            if serial == segment.serial {
                switch item {
                case .item(let frame): return .item(frame)
                case .end: return .end
                }
            }
            let current = control.segment
            if current.serial != segment.serial {
                segment = current
                if serial == current.serial { held = (item, serial) }
                return .superseded
            }
            // An item of an older segment, taken just before its queue was flushed.
        }
    }

    /// How a segment's playback begins (`firstFrame(endsBefore:)`).
    enum Start {
        /// With its first frame that is due, or with none (the segment ended at once).
        case first(Frame?)
        /// A seek began a newer segment meanwhile; `segment` is now that one.
        case superseded
    }

    /// The segment's first frame that is due: after an exact seek, the first that does not end before the target
    /// (`endsBefore(frame, target)`, the output's own measure of a frame); nil when stopping. The audio and the video
    /// output begin each segment this way.
    mutating func firstFrame(endsBefore: (Frame, Double) -> Bool) -> Start? {
        let segment = self.segment
        while true {
            guard let item = next() else { return nil }
            switch item {
            case .end: return .first(nil)
            case .superseded: return .superseded
            case .item(let frame):
                if segment.exact, let target = segment.target, endsBefore(frame, target) { continue }
                return .first(frame)
            }
        }
    }

    /// Whether a next item is already at hand (held, or waiting in the queue): `next()` would not wait.
    var hasNextAtHand: Bool { held != nil || frames.hasWaitingItem }

    /// Moves to the current segment, after a wait reported that the one being played was superseded.
    mutating func catchUp() { segment = control.segment }
}
