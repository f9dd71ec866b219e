#if canImport(Glibc)
    import Glibc
#endif

/// CLOCK_MONOTONIC, the clock of the clock exchange and of a group's scheduled instants (docs/protocol.md, "Clock
/// exchange", "Groups"): it never jumps, and a time namespace moves it (the lab gives each castd its own offset). Read
/// directly, not through `ContinuousClock` (CLOCK_BOOTTIME on Linux) or Dispatch, so that every part of a program, and
/// both ends of a connection, stamp the same clock. The engine's clock (CastMedia) reads it too.
public enum MonotonicClock {
    /// Now, in nanoseconds.
    public static func nanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        let now = Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
        return testSkew == 0 ? now : now + Int64((Double(now) * testSkew).rounded())
    }

    /// Test only: a rate error, from `CAST_TEST_CLOCK_SKEW_PPM` (−1000…1000 parts per million; anything else is 0),
    /// read once. The lab's stand-in for a box whose crystal runs fast or slow (docs/multiroom.md): every reading is
    /// scaled by 1 + skew, in every process that inherits the variable (castd and its workers alike), so a group's
    /// members drift apart as two boxes would. castd warns when it is set. Sleeps and timeouts are not scaled: they are
    /// 100 ppm off at most, a few microseconds.
    public static let testSkew: Double = {
        guard let text = getenv("CAST_TEST_CLOCK_SKEW_PPM").map({ String(cString: $0) }), let ppm = Double(text),
            ppm.isFinite, abs(ppm) <= 1000
        else { return 0 }
        return ppm / 1e6
    }()
}
