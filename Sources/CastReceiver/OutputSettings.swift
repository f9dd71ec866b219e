import CastProtocol

/// What belongs to the receiver rather than to a session, like a TV's: the volume, mute and how pictures fit the
/// window. They hold with nothing playing and carry over to the next session. A value with no I/O: `Receiver`
/// carries out what `take` says (the session's output, the window, the log).
///
/// Thread-safety: a value; `Receiver` keeps it under its lock.
struct OutputSettings: Equatable {
    /// What a sender's control comes to.
    enum Effect: Equatable {
        /// The output's level (0...1) and mute are now these: the session that plays, if any, takes them.
        case volume(level: Double, muted: Bool)
        /// Pictures fit by this from now on (`Receiver.setScalingMode`: the window, the session, the log).
        case scaling(VideoScalingMode)
        /// The control is the session's (pause, seek, stop, …): with no session it is refused.
        case session
    }

    /// The output level, 0...1.
    private(set) var level: Double = 1
    /// Whether the output is muted (the level is kept).
    private(set) var muted = false
    /// How the window fits pictures.
    var scaling: VideoScalingMode

    init(scaling: VideoScalingMode) {
        self.scaling = scaling
    }

    /// A sender's control: a volume or mute changes the receiver's own level; a scaling is the window's; anything
    /// else goes to the session. The scaling is not taken here: it comes in through `scaling` for the sender's word
    /// and SIGHUP's alike.
    mutating func take(_ action: PlaybackControl.Action) -> Effect {
        switch action {
        case .volume(let value):
            level = value
            return .volume(level: level, muted: muted)
        case .mute(let value):
            muted = value
            return .volume(level: level, muted: muted)
        case .scaling(let mode):
            return .scaling(mode)
        default:
            return .session
        }
    }
}
