import CastProtocol

/// The values a group computes from timing (instants from clock estimates, positions from a member's reports, the
/// time since a scheduled start) made safe for the wire: a value the protocol would refuse, or that a conversion to
/// `Int64` would trap on, becomes nil (the control is not sent, the group goes on) or is clamped to its range. Every
/// number here may come from a member, so none is trusted to be finite or in range. Pure: tested in
/// GroupTimingTests.
enum GroupTiming {
    /// `seconds` as nanoseconds, rounded; nil when not finite or beyond what an `Int64` holds.
    static func nanoseconds(_ seconds: Double) -> Int64? {
        let value = (seconds * 1e9).rounded()
        // 2⁶³ is exactly representable; every double below it converts.
        guard value.isFinite, value >= -9.223_372_036_854_775_808e18, value < 9.223_372_036_854_775_808e18 else {
            return nil
        }
        return Int64(value)
    }

    /// A CLOCK_MONOTONIC instant (`seconds`) as a control carries it (`resumeAt`, `align`): nanoseconds, never
    /// negative; nil otherwise.
    static func instant(_ seconds: Double) -> Int64? {
        nanoseconds(seconds).flatMap { $0 >= 0 ? $0 : nil }
    }

    /// A position within what a control carries (`PlaybackControl.positions`); not a number: 0.
    static func position(_ seconds: Double) -> Double {
        let range = PlaybackControl.positions
        return seconds.isNaN ? 0 : min(max(seconds, range.lowerBound), range.upperBound)
    }

    /// A rate within what a control carries (`PlaybackControl.rates`); not a number: 1.
    static func rate(_ rate: Double) -> Double {
        rate.isNaN ? 1 : min(max(rate, PlaybackControl.rates.lowerBound), PlaybackControl.rates.upperBound)
    }

    /// The uncertainty within which a member's clock is known well enough for a start at once: 0.5 ms (a plain
    /// link's first exchanges tell it within a few tenths).
    static let startUncertainty = 0.5e-3
    /// The span of exchanges after which a start waits no longer: 2 s (20 exchanges at the group's cadence). On a
    /// path whose every exchange is held milliseconds each way (Wi-Fi's) no number of them narrows the bound below
    /// the two ways' least delays, but the estimate within it settles: over the jitter relay, the members' first
    /// second was 0.3–0.4 ms off each (so 1.5 ms apart at the first beep), from the third on 0.1 ms.
    static let startSpan = 2.0

    /// Whether a start may be scheduled by a member's clock estimate: its uncertainty is within `startUncertainty`,
    /// or its exchanges span `startSpan`. No estimate yet (nil), or an uncertainty that is not a number: only by the
    /// span.
    static func clockSettled(uncertainty: Double?, span: Double) -> Bool {
        guard let uncertainty else { return span >= startSpan }
        return uncertainty <= startUncertainty || span >= startSpan
    }

    /// An `align`'s elapsed time, or nil when the wire would refuse it (an alignment is skipped, not clamped: a wrong
    /// one would move the member).
    static func elapsed(_ seconds: Double) -> Double? {
        PlaybackControl.positions.contains(seconds) ? seconds : nil
    }
}
