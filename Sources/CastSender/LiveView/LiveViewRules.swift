// What a key of cast's live view does, given what plays: pure, value in, value out.
public import CastProtocol

/// The rules of the live view's keys, for one source or a queue, on one receiver or a group (the group's `control`
/// carries a volume to every member). Pure: the caller passes what the receiver last reported and carries out the
/// answer.
public enum LiveViewRules {
    /// How far ←/→ seek (seconds).
    public static let seekStep = 10.0
    /// How much ↑/↓ (and `cast volume NAME up|down`) change the volume (of 0...1): a tenth; levels land on tenths.
    public static let volumeStep = 0.1
    /// Played longer than this (seconds), `p` goes back to the start of the source, as music players do; otherwise
    /// to the previous source.
    public static let restartAfter = 3.0

    /// What plays, as the receiver last reported it.
    public struct Now: Sendable, Equatable {
        /// The playback state.
        public var state: PlaybackState
        /// The position (seconds).
        public var position: Double
        /// The duration, when known.
        public var duration: Double?
        /// The volume (0...1).
        public var volume: Double
        /// Whether a queue plays (`cast queue`): `n` and `p` move through it.
        public var isQueue: Bool

        /// Creates a snapshot.
        public init(state: PlaybackState, position: Double, duration: Double?, volume: Double, isQueue: Bool) {
            (self.state, self.position, self.duration, self.volume, self.isQueue) =
                (state, position, duration, volume, isQueue)
        }
    }

    /// What to do for a key.
    public enum Action: Sendable, Equatable {
        /// Send this control to what plays.
        case control(PlaybackControl.Action)
        /// Stop what plays and move through the queue.
        case skip(QueueMove)
        /// Stop everything and exit.
        case quit
        /// Nothing (a key that does not apply here).
        case ignore
    }

    /// What `key` does now.
    public static func action(for key: LiveKey, now: Now) -> Action {
        switch key {
        case .space: return .control(now.state == .paused ? .resume : .pause)
        case .quit: return .quit
        case .left: return .control(.seek(position: seekTarget(now.position - seekStep, now), exact: false))
        case .right: return .control(.seek(position: seekTarget(now.position + seekStep, now), exact: false))
        case .up: return .control(.volume(stepped(now.volume, by: 1)))
        case .down: return .control(.volume(stepped(now.volume, by: -1)))
        case .next: return now.isQueue ? .skip(.next) : .ignore
        case .previous: return previous(now)
        }
    }

    /// `p` (and `cast previous`): the start of the source when it has played more than `restartAfter` seconds (or
    /// when it is not a queue), otherwise the previous source.
    public static func previous(_ now: Now) -> Action {
        guard now.isQueue, !(now.position > restartAfter) else { return .control(.seek(position: 0, exact: true)) }
        return .skip(.previous)
    }

    /// A volume `steps` steps from `level`, on a tenth, within 0...1 (a level reported between tenths goes to the
    /// next tenth in that direction).
    public static func stepped(_ level: Double, by steps: Int) -> Double {
        let tenths = (level.isFinite ? level : 1) * 10
        // A level a rounding error off a tenth counts as that tenth.
        let here = (tenths - tenths.rounded()).magnitude < 1e-6 ? tenths.rounded() : tenths
        let target = steps > 0 ? (here + Double(steps)).rounded(.down) : (here + Double(steps)).rounded(.up)
        return min(1, max(0, target / 10))
    }

    /// `position` within the film: not before 0, not past the end when it is known.
    private static func seekTarget(_ position: Double, _ now: Now) -> Double {
        var target = max(0, position.isFinite ? position : 0)
        if let duration = now.duration, duration.isFinite, duration >= 0 { target = min(target, duration) }
        return min(target, 1e7)  // the wire's bound for a position
    }
}
