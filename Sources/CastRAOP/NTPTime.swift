/// A 64-bit NTP timestamp (seconds since 1900 in the high 32 bits, binary fraction in the low 32), as RAOP's
/// timing and sync packets carry it. The speaker only uses differences between our timestamps, so their epoch
/// matters less than that they come from one steady clock (see `SpeakerClock`).
public struct NTPTime: Sendable, Hashable, Comparable {
    /// The 64-bit value on the wire.
    public var rawValue: UInt64

    /// Seconds between 1900-01-01 (NTP's epoch) and 1970-01-01 (Unix's).
    public static let unixEpochOffset: UInt64 = 2_208_988_800

    /// Wraps a wire value.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// The timestamp `nanoseconds` after 1970-01-01 (clamped at 0).
    public init(unixNanoseconds nanoseconds: Int64) {
        let clamped = UInt64(max(0, nanoseconds))
        let seconds = clamped / 1_000_000_000 + Self.unixEpochOffset
        let fraction = ((clamped % 1_000_000_000) << 32) / 1_000_000_000
        rawValue = (seconds << 32) | fraction
    }

    /// Whole seconds since 1900.
    public var seconds: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 32) }
    /// The fraction of a second, in units of 2⁻³² s.
    public var fraction: UInt32 { UInt32(truncatingIfNeeded: rawValue) }

    /// Nanoseconds since 1970-01-01 (rounded down); negative before it.
    public var unixNanoseconds: Int64 {
        let seconds = Int64(self.seconds) - Int64(Self.unixEpochOffset)
        return seconds * 1_000_000_000 + Int64((UInt64(fraction) * 1_000_000_000) >> 32)
    }

    public static func < (a: NTPTime, b: NTPTime) -> Bool { a.rawValue < b.rawValue }
}

/// Maps our monotonic clock to the NTP timestamps we tell the speaker: the wall clock once, at creation, then
/// steady (a wall-clock step mid-stream must not move what the speaker believes our time is).
public struct SpeakerClock: Sendable {
    /// Wall-clock nanoseconds since 1970 minus monotonic nanoseconds, taken once.
    public let offset: Int64

    /// Anchors the mapping: `wall` and `monotonic` read at the same moment (nanoseconds).
    public init(wallNanoseconds wall: Int64, monotonicNanoseconds monotonic: Int64) {
        offset = wall - monotonic
    }

    /// The NTP time of a monotonic instant (nanoseconds).
    public func ntp(monotonicNanoseconds monotonic: Int64) -> NTPTime {
        NTPTime(unixNanoseconds: monotonic + offset)
    }
}
