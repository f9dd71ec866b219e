/// How long one request may take to arrive, in the manner of Apache's mod_reqtimeout (`body=10,MinRate=…`): `base`
/// from its first byte, and a second more for every `bodyRate` bytes of its body that have arrived. A 16 MiB picture
/// from an iPhone on a slow Wi-Fi link (17 s at 8 Mbit/s) is waited for as long as it keeps coming at `bodyRate` or
/// faster; a head sent slowly (slowloris), or a body trickling in slower than that, is cut off as before, so that a
/// client cannot hold a connection place and the bytes reserved for its picture by sending next to nothing.
///
/// Thread-safety: a value.
public struct RequestTimeout: Sendable, Equatable {
    /// The time from a request's first byte to its last, before any of its body counts.
    public var base: Duration
    /// The slowest a body may arrive, in bytes per second, and still earn time (1 Mbit/s by default).
    public var bodyRate: Int

    public init(base: Duration = .seconds(10), bodyRate: Int = 128 * 1024) {
        precondition(bodyRate > 0, "a body rate of bytes per second")
        self.base = base
        self.bodyRate = bodyRate
    }

    /// The time a request may take from its first byte, `bodyReceived` bytes of its body having arrived.
    public func allowed(bodyReceived: Int) -> Duration {
        base + .milliseconds(Int64(max(0, bodyReceived)) * 1000 / Int64(bodyRate))
    }
}
