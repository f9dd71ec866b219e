import Glibc

/// CLOCK_MONOTONIC, the clock of the clock exchange (docs/protocol.md, "Clock exchange"): it never jumps, and a time
/// namespace moves it (the lab gives each castd its own offset). Read directly, not through `ContinuousClock`
/// (CLOCK_BOOTTIME on Linux) or Dispatch, so that both ends stamp the same clock.
public enum MonotonicClock {
    /// Now, in nanoseconds.
    public static func nanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
