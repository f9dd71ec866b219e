/// When a mirrored screen's sound is heard: the rule that keeps it within a few milliseconds of the pictures, which
/// are shown as soon as they are decoded. Pure: times in microseconds are inputs, decisions are outputs.
///
/// The sender stamps pictures and sound with one clock; the receiver's clock differs by an unknown offset. The
/// smallest (arrival − capture) seen is that offset plus the quickest transit: a sample captured at `c` can be heard
/// at `c + offset` at the earliest. Pictures are later than that by their encoding, sending and decoding (the
/// picture lag, smoothed); sound is heard at `c + offset + max(jitter, picture lag, device latency + tolerance)`:
/// late enough that a unit delayed by the network still arrives in time (the jitter buffer) and that the device can
/// play it then (a PCM that ends in `null` is heard a buffer after it is written), and no earlier than the picture
/// captured with it. Sound early by more than `tolerance` waits (silence first); sound late by more is cut from its start: it never
/// drifts.
///
/// Thread-safety: a value; the sound thread owns it (under the output's lock when the picture thread reports).
struct MirrorSoundSchedule: Sendable, Equatable {
    /// The jitter buffer: how long after the earliest possible moment sound is heard, at least.
    let jitter: Int64
    /// How far from its moment a unit may be heard before it is moved (silence or a cut).
    let tolerance: Int64
    /// The longest picture lag followed: a stalled decoder must not hold the sound back for ever.
    static let maximumLag: Int64 = 500_000

    /// How long after it is written the device plays a sample at the least (0 for a card written at the moment).
    var deviceLatency: Int64 = 0

    private var offset: Int64?
    private var pictureLag: Int64?

    /// A schedule with a jitter buffer of `jitter` and a tolerance of `tolerance` microseconds.
    init(jitter: Int64 = 50_000, tolerance: Int64 = 10_000) {
        self.jitter = jitter
        self.tolerance = tolerance
    }

    /// A unit (picture, cursor or sound) captured at `captured` (the sender's clock) arrived at `now` (ours).
    mutating func arrived(captured: UInt64, at now: Int64) {
        let seen = now - Int64(clamping: captured)
        offset = min(offset ?? seen, seen)
    }

    /// A picture captured at `captured` was shown at `now`.
    mutating func shown(captured: UInt64, at now: Int64) {
        arrived(captured: captured, at: now)
        guard let offset else { return }
        let lag = min(max(now - Int64(clamping: captured) - offset, 0), Self.maximumLag)
        // Smoothed over about eight pictures: one slow picture does not move the sound.
        pictureLag = pictureLag.map { $0 + (lag - $0) / 8 } ?? lag
    }

    /// When the sample captured at `captured` is to be heard, on our clock; nil before any unit arrived.
    func moment(captured: UInt64) -> Int64? {
        guard let offset else { return nil }
        return Int64(clamping: captured) + offset + max(jitter, pictureLag ?? 0, deviceLatency + tolerance)
    }

    /// What to do with a unit of `frames` frames at `rate`, captured at `captured`, whose first frame would be heard
    /// at `heard` if written now.
    enum Decision: Equatable {
        /// Write it now.
        case play
        /// It is early by this many microseconds: wait (or write silence first), then write it.
        case early(Int64)
        /// It is late: cut this many frames from its start (all of them: skip it).
        case late(frames: Int)
    }

    /// The decision for a unit (see `Decision`).
    func decide(captured: UInt64, frames: Int, rate: Int, heard: Int64) -> Decision {
        guard let moment = moment(captured: captured) else { return .play }
        let early = moment - heard
        if early > tolerance { return .early(early) }
        if -early > tolerance { return .late(frames: min(Int(-early * Int64(rate) / 1_000_000), frames)) }
        return .play
    }
}
