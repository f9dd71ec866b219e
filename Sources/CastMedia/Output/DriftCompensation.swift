/// Keeps a sound card that paces itself in step with the clock it should follow (a group member's `PlaybackClock`,
/// which `Player.align` keeps on the group's timeline): the card's position against that clock in, the rate to play the
/// media at against the card out, applied by resampling (`Resampler.stretch`). Pure: errors and times are arguments, so
/// it is tested without a card (DriftCompensationTests).
///
/// A PI controller: the rate is `1 − (error / settle + ∫error / integralTime²)`. The proportional term alone would
/// leave an error of drift × settle (0.3 ms for a card 150 ppm off); the integral term learns the card's rate against
/// the clock and removes it. With settle 2 s and integral time 4 s (Ki = Kp² / 4) the loop is critically damped. The
/// rate stays within ±`limit`, and the integral stops growing while it is held at the limit (no wind-up).
///
/// Each error is taken through the upper envelope of the last `window` of them (the largest but a tenth): where the
/// card is is known only at the moments a blocking write returns, and a device that moves audio in blocks (a DMA period
/// whose pointer is updated once a period, a USB packet, a page of a pipe) makes that estimate vary by up to a block
/// from one write to the next. The largest of a second's errors is the steadiest: on a card whose delay lags its
/// pointer, the one taken just after the pointer moved; in the lab's pipe, the one with a whole page held (a constant,
/// calibrated away). The largest tenth is left out: a stray early reading would otherwise move the envelope for a whole
/// window.
///
/// A device that reports no delay (`calibrates`; `AlsaDevice.delay()` is 0, as ALSA's file plugin over null in the lab)
/// hides what it holds, so the error it yields is off by a constant; the envelope of the first `window` after a start
/// is taken as its zero, the start itself being placed right by priming the device with silence.
struct DriftCompensation: Sendable {
    /// How long the error takes to be made up by the proportional term: 2 s.
    static let settle = 2.0
    /// The integral term's time: 4 s (critically damped with `settle`: 1 / 4² = (1 / 2)² / 4).
    static let integralTime = 4.0
    /// The largest correction: ±0.1 % (1000 ppm, ten times a poor crystal's error), as the clock's trim.
    static let limit = 0.001
    /// The envelope's span: 1 s.
    static let window = 1.0
    /// The envelope: this quantile of the window's errors.
    static let envelopeQuantile = 0.9

    /// Whether the first window's envelope is the zero (a device that reports no delay).
    let calibrates: Bool
    private var recent: [(time: Double, error: Double)] = []
    private var first: Double?
    private var reference: Double?
    private var integral = 0.0
    private var last: Double?
    /// The media seconds to play per second of the card: 1 ± `limit` (1: not corrected yet).
    private(set) var rate = 1.0
    /// The envelope of the error less its zero (s, positive: the card plays ahead of the clock); nil while the first
    /// window fills.
    private(set) var offset: Double?

    init(calibrates: Bool) { self.calibrates = calibrates }

    /// Takes the card's error against the clock (`error`, seconds, positive: ahead) measured at `time` (seconds, any
    /// origin, increasing) and returns the rate to play the media at from now on.
    mutating func update(error: Double, at time: Double) -> Double {
        guard error.isFinite, time.isFinite else { return rate }
        if let newest = recent.last?.time, time < newest { return rate }
        recent.append((time, error))
        let start = first ?? time
        first = start
        recent.removeFirst(recent.prefix { $0.time < time - Self.window }.count)
        let sorted = recent.map(\.error).sorted()
        let envelope = sorted[Int(Double(sorted.count - 1) * Self.envelopeQuantile)]
        if time - start < Self.window {
            last = time
            return rate
        }
        let zero = reference ?? (calibrates ? envelope : 0)
        reference = zero
        let e = envelope - zero
        offset = e
        let step = max(min(time - (last ?? time), Self.window), 0)
        last = time
        let wanted = -(e / Self.settle + integral / (Self.integralTime * Self.integralTime))
        // Integrate unless held at the limit by an error that would push further.
        if abs(wanted) < Self.limit || (wanted > 0) == (e > 0) { integral += e * step }
        let correction = -(e / Self.settle + integral / (Self.integralTime * Self.integralTime))
        rate = 1 + min(max(correction, -Self.limit), Self.limit)
        return rate
    }
}
