import CastBase

/// What is known about one playback, folded from its events in order: the one reducer (event in, state out) that
/// the receiver's session and its status replies, `cast send`'s status line and CastKit's movie player share, so that
/// an event means the same thing everywhere.
///
/// It records facts only. What a consumer does with a change (CastKit announces a duration once per movie, ignores a
/// position before the clock starts; the receiver replaces a finish by its own reason) stays with the consumer, which
/// learns what changed from `apply(_:)`'s result. Logs (access and error entries) are not state and are not kept.
///
/// Thread-safety: a value; its owner guards it.
public struct PlaybackSnapshot: Sendable, Equatable {
    /// A reported position: media seconds, and the reporter's wall clock (seconds since 1970) when they were true.
    public struct Position: Sendable, Equatable {
        public var seconds: Double
        public var at: Double
        public init(seconds: Double, at: Double) {
            self.seconds = seconds
            self.at = at
        }
    }

    /// How a playback finished.
    public struct Finish: Sendable, Equatable {
        public var reason: FinishReason
        public var error: String?
        public var code: FinishCode?
        public init(reason: FinishReason, error: String? = nil, code: FinishCode? = nil) {
            self.reason = reason
            self.error = error
            self.code = code
        }
    }

    /// What an event changed.
    public struct Changes: OptionSet, Sendable {
        public let rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }

        public static let state = Changes(rawValue: 1 << 0)
        public static let loadState = Changes(rawValue: 1 << 1)
        public static let duration = Changes(rawValue: 1 << 2)
        public static let mediaTypes = Changes(rawValue: 1 << 3)
        public static let naturalSize = Changes(rawValue: 1 << 4)
        public static let readyForDisplay = Changes(rawValue: 1 << 5)
        public static let position = Changes(rawValue: 1 << 6)
        public static let videoActive = Changes(rawValue: 1 << 7)
        public static let volume = Changes(rawValue: 1 << 8)
        public static let rate = Changes(rawValue: 1 << 9)
        public static let buffered = Changes(rawValue: 1 << 10)
        public static let metadata = Changes(rawValue: 1 << 11)
        public static let tracks = Changes(rawValue: 1 << 12)
        public static let finish = Changes(rawValue: 1 << 13)
        public static let sync = Changes(rawValue: 1 << 14)
    }

    public var state: PlaybackState = .stopped
    public var loadState: LoadState = []
    public var duration: Double?
    public var mediaTypes: [MediaType]?
    public var naturalSize: (width: Int, height: Int)? {
        get { size.map { ($0.width, $0.height) } }
        set { size = newValue.map { Size(width: $0.width, height: $0.height) } }
    }
    public var readyForDisplay = false
    /// The last position reported (while the clock stood, or ran: see `position(now:)`).
    public var position: Position?
    public var videoActive = false
    public var volume: (level: Double, muted: Bool)? {
        get { level.map { ($0.level, $0.muted) } }
        set { level = newValue.map { Level(level: $0.level, muted: $0.muted) } }
    }
    /// Media seconds per second while playing.
    public var rate = 1.0
    /// The media time buffered up to, and how far that is ahead of the position (the last `buffered` event).
    public var playableDuration: Double?
    public var bufferedAhead: Double?
    /// The input's rate as the receiver measures it (bits/s), and, while stalled, the seconds it expects to wait (the
    /// last `buffered` event; nil when it did not say).
    public var linkRate: Double?
    public var expectedWait: Double?
    public var metadata: TimedMetadata?
    /// The media's audio and subtitle tracks; nil until reported.
    public var tracks: [MediaTrack]?
    /// A group member's last step (`sync`); nil outside a group.
    public var sync: ReceiverStatus.Sync?
    /// Set by the last event, `finished`; the state is then `stopped`.
    public var finish: Finish?

    // Tuples are not Equatable: the two pairs are kept as small structs.
    private struct Size: Sendable, Equatable {
        var width: Int
        var height: Int
    }
    private struct Level: Sendable, Equatable {
        var level: Double
        var muted: Bool
    }
    private var size: Size?
    private var level: Level?

    public init() {}

    /// Folds `event` in; returns what it changed (empty when it repeated what was known, or carries no state).
    @discardableResult
    public mutating func apply(_ event: PlaybackEvent) -> Changes {
        func set<Value: Equatable>(_ path: WritableKeyPath<PlaybackSnapshot, Value>, _ value: Value, _ change: Changes)
            -> Changes
        {
            guard self[keyPath: path] != value else { return [] }
            self[keyPath: path] = value
            return change
        }
        switch event {
        case .playbackState(let new): return set(\.state, new, .state)
        case .loadState(let load): return set(\.loadState, load, .loadState)
        case .durationAvailable(let seconds): return set(\.duration, seconds, .duration)
        case .mediaTypes(let types): return set(\.mediaTypes, types, .mediaTypes)
        case .naturalSize(let width, let height): return set(\.size, Size(width: width, height: height), .naturalSize)
        case .readyForDisplay: return set(\.readyForDisplay, true, .readyForDisplay)
        case .position(let seconds, let at): return set(\.position, Position(seconds: seconds, at: at), .position)
        case .videoActive(let active): return set(\.videoActive, active, .videoActive)
        case .volume(let value, let muted): return set(\.level, Level(level: value, muted: muted), .volume)
        case .rate(let value): return set(\.rate, value, .rate)
        case .buffered(let playable, let ahead, let linkRate, let wait):
            return set(\.playableDuration, playable, .buffered).union(set(\.bufferedAhead, ahead, .buffered))
                .union(set(\.linkRate, linkRate, .buffered)).union(set(\.expectedWait, wait, .buffered))
        case .metadata(let value): return set(\.metadata, value, .metadata)
        case .tracks(let value): return set(\.tracks, value, .tracks)
        case .sync(let offset, let trim, let limited):
            return set(\.sync, ReceiverStatus.Sync(offset: offset, trim: trim, limited: limited ? true : nil), .sync)
        case .finished(let reason, let error, let code):
            let stopped = set(\.state, .stopped, .state)
            return stopped.union(set(\.finish, Finish(reason: reason, error: error, code: code), .finish))
        case .accessLog, .errorLog, .scheduledStart, .joinRequest, .skipRequest, .moveRequest: return []
        }
    }

    /// Whether the input cannot keep up (load state `stalled`).
    public var isStalled: Bool { loadState.contains(.stalled) }

    /// The position at wall-clock time `now` (seconds since 1970): the last report moved on at the rate while
    /// playing, never past the duration (PositionEstimate); nil before any report.
    public func position(now: Double) -> Double? {
        position.map {
            PositionEstimate.position(
                reported: $0.seconds, at: $0.at, now: now, rate: state == .playing ? rate : 0, duration: duration)
        }
    }
}
