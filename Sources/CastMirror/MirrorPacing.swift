/// When `cast mirror` captures and encodes a picture. A pure rule with time as an input (microseconds); the helper
/// tells it what XDamage reported and what each picture came out as, and asks it how long to wait for a change and
/// whether the picture at hand is wanted.
///
/// A change is captured as soon as the X server reports it, at most `fps` pictures a second (over time: a picture may
/// go up to half a picture's time early for the rate); while the screen keeps changing, the pacing waits for the next
/// change rather than taking the screen at a tick. After the damage stops
/// the screen is *settling*: pictures go on at the full rate, of the unchanged screen, until the encoder says the
/// receiver's picture has converged, i.e. `convergedPictures` pictures in a row came out at a quantiser of at most
/// `sharpQuantiser` (every block coded at that step or better; the receiver decodes the very pictures the encoder
/// reconstructs, so their quality is the receiver's). A picture skipped because the queue was full does not count:
/// on a slow link or a busy receiver settling simply takes longer, it never ends on a blurred picture. Settling gives
/// up `settlingLimit` after the last change (a screen that never sharpens costs no more than that). When the change
/// came out cut hard by the cap (`starvedQuantiser`), the encoder starts afresh before sharpening (`wantsFreshStart`). A settled,
/// unchanged screen sends a picture a second (`keepalive`: a few bytes of skipped blocks that show the sender is
/// there).
public struct MirrorPacing: Sendable, Equatable {
    /// The time between two pictures at the rate: a second over `fps`.
    public let interval: UInt64
    /// How much earlier than due a picture may go: half a picture's time. (A strict least time between pictures,
    /// with changes that come at the rate, delays each change by a time that drifts through the whole interval, as a
    /// tick does: half a picture's time on average.)
    public var tolerance: UInt64 { interval / 2 }
    /// The quantiser at or under which a picture counts as sharp.
    public let sharpQuantiser: Int
    /// When the last picture went out; nil before the first.
    private var lastSent: UInt64?
    /// When the next picture is due at the rate (the generic cell rate algorithm's theoretical arrival time): it may
    /// go up to `tolerance` before, so that a change a little early for the rate is captured at once, not at the
    /// next tick, and still no more than `fps` pictures a second go over any stretch of time (and one more).
    private var due: UInt64?
    /// When the damage last reported a change; nil when the screen has settled.
    private var lastChange: UInt64?
    /// Sharp pictures in a row since the last change.
    private var sharpInARow = 0
    /// Whether the screen changed since the last picture was captured.
    private var dirty = true
    /// Whether the last change came out cut hard by the cap (a quantiser of at least `starvedQuantiser`): the
    /// encoder is to start afresh (`ScreenEncoder.restart`) before the pictures that sharpen it.
    public private(set) var wantsFreshStart = false

    /// Sharp pictures in a row after which the screen has settled.
    public static let convergedPictures = 2
    /// How long after the last change settling goes on at most.
    public static let settlingLimit: UInt64 = 10_000_000
    /// The quantiser from which a picture counts as cut hard by the cap.
    public static let starvedQuantiser = 45
    /// How long an unchanged, settled screen goes without a picture.
    public static let keepalive: UInt64 = 1_000_000
    /// Pictures' time after a change during which the next change is waited for rather than the unchanged screen
    /// sharpened: a screen that changes at the rate or a little slower (a video, a game, the benchmark's code) is
    /// captured at each change.
    public static let changingPictures: UInt64 = 2

    /// Pictures at most `fps` a second; a picture at a quantiser of at most `sharpQuantiser` is sharp.
    public init(fps: Int, sharpQuantiser: Int) {
        interval = 1_000_000 / UInt64(max(fps, 1))
        self.sharpQuantiser = sharpQuantiser
    }

    /// Whether pictures still go at the full rate although the damage stopped.
    public var isSettling: Bool { lastChange != nil }

    /// Whether the picture at hand only sharpens: settling, and no change since the last picture.
    public var isSharpening: Bool { lastChange != nil && !dirty }

    /// How long to wait at `now` before the next picture may be captured (the rate's limit), in microseconds.
    public func pause(now: UInt64) -> UInt64 {
        guard let due, due > now + tolerance else { return 0 }
        return due - tolerance - now
    }

    /// How long to wait at `now` for the damage before a picture is wanted anyway, in microseconds: none while the
    /// screen is dirty; while it keeps changing, until `changingPictures` pictures' time after the last change, so
    /// that the next change is captured the moment the X server reports it, not at the next tick (which would add
    /// half a picture's time on average to every picture of a moving screen); none while settling after that; else
    /// until the keepalive is due.
    public func waitForChange(now: UInt64) -> UInt64 {
        if dirty { return 0 }
        guard let lastSent else { return 0 }
        if let lastChange {
            let changing = lastChange + Self.changingPictures * interval
            return changing > now ? changing - now : 0
        }
        return lastSent + Self.keepalive > now ? lastSent + Self.keepalive - now : 0
    }

    /// The encoder started afresh (`wantsFreshStart` was answered).
    public mutating func startedAfresh() { wantsFreshStart = false }

    /// The damage reported a change at `now`.
    public mutating func changed(at now: UInt64) {
        dirty = true
        lastChange = now
        sharpInARow = 0
    }

    /// Whether a picture captured at `now` is wanted: the screen changed, is settling, or the keepalive is due.
    public mutating func wants(now: UInt64) -> Bool {
        if let lastChange, now >= lastChange + Self.settlingLimit, !dirty {
            self.lastChange = nil
        }
        guard let lastSent else { return true }
        return dirty || lastChange != nil || now >= lastSent + Self.keepalive
    }

    /// A picture captured at `now` went out, encoded at `quantiser` (nil: the encoder did not say).
    public mutating func sent(at now: UInt64, quantiser: Int?) {
        lastSent = now
        due = max(due ?? now, now) + interval
        if dirty { wantsFreshStart = (quantiser ?? 0) >= Self.starvedQuantiser }
        dirty = false
        guard lastChange != nil else { return }
        if let quantiser, quantiser <= sharpQuantiser {
            sharpInARow += 1
        } else {
            sharpInARow = 0
        }
        if sharpInARow >= Self.convergedPictures { lastChange = nil }
    }
}
