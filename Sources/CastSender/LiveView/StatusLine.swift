// The live status line of cast send and cast queue, and the clock text every verb prints: numbers a receiver sent,
// shown without trusting them.
public import CastProtocol

/// The live status line of `cast send` on a terminal (mpv-like): state, position / duration, bar, volume, title.
/// Every number comes from the receiver: whatever it sends (any finite value passes the wire's decoder), the line is
/// drawn and nothing traps.
public struct StatusLine: Sendable {
    /// What the events said so far.
    public var playback = PlaybackSnapshot()
    /// What plays (a file's title, a URL).
    public var title: String
    /// Where a queue is ("3/12"), shown before the title; nil for a single source.
    public var place: (number: Int, count: Int)?

    /// A line for `title`.
    public init(title: String, place: (number: Int, count: Int)? = nil) {
        self.title = title
        self.place = place
    }

    /// The line, with a progress bar `width` characters wide.
    public func render(width: Int = 24) -> String {
        let (state, duration, position) = (playback.state, playback.duration, playback.position?.seconds)
        let volume = playback.volume.map { $0.muted ? 0 : $0.level }
        let symbol: String
        switch state {
        case .playing: symbol = "▶"
        case .paused: symbol = "⏸"
        case .stopped: symbol = "■"
        case .interrupted: symbol = "…"
        case .seekingForward: symbol = "⏩"
        case .seekingBackward: symbol = "⏪"
        }
        var bar = ""
        if let duration, duration > 0, let position {
            let filled = min(width, max(0, Int(saturating: (position / duration) * Double(width))))
            bar = "  [" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]"
        }
        let level = volume.map { "  vol \(Int(saturating: min(1000, max(0, $0 * 100)).rounded()))%" } ?? ""
        // A stall says how long the receiver expects it to last ("buffering, 14 s"), when it said.
        let wait = playback.expectedWait.map { ", \(Int(saturating: min(max($0, 0), 1e7).rounded(.up))) s" } ?? ""
        let buffering =
            (playback.isStalled ? "  buffering\(wait)" : "")
            + (playback.bufferedAhead.map { "  buf \(Int(saturating: $0))s" } ?? "")
        let queue = place.map { "  \($0.number)/\($0.count)" } ?? ""
        return "\(symbol) \(state.rawValue)\(buffering)  \(Self.clock(position)) / \(Self.clock(duration))\(bar)"
            + "\(level)\(queue)  \(title)"
    }

    /// A rate in bits per second as people read it: "790 kbit/s", "1.97 Mbit/s", "24 Mbit/s"; "--" for a negative or
    /// a non-finite value.
    public static func rate(_ bits: Double) -> String {
        guard bits.isFinite, bits >= 0 else { return "--" }
        if bits < 1e6 { return "\(Int(saturating: (bits / 1e3).rounded())) kbit/s" }
        let mega = bits / 1e6
        let digits = mega < 10 ? 2 : (mega < 100 ? 1 : 0)
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = Int(saturating: (min(mega, 1e9) * scale).rounded())
        let whole = scaled / Int(scale)
        guard digits > 0 else { return "\(whole) Mbit/s" }
        let fraction = String(scaled % Int(scale))
        return "\(whole).\(String(repeating: "0", count: digits - fraction.count))\(fraction) Mbit/s"
    }

    /// Seconds as m:ss (h:mm:ss is not used: minutes go on counting); "--:--" for none, a negative or a
    /// non-finite value. Beyond 10⁷ s (the wire's bound for a position) it shows 10⁷ s.
    public static func clock(_ seconds: Double?) -> String {
        guard let seconds, seconds.isFinite, seconds >= 0 else { return "--:--" }
        let whole = Int(saturating: min(seconds, 1e7))
        return "\(whole / 60):" + (whole % 60 < 10 ? "0" : "") + "\(whole % 60)"
    }
}

extension Int {
    /// `value` toward zero as an `Int`, never trapping: NaN is 0, and a value beyond `Int`'s range is its bound
    /// (`Int(_:)` traps on both, and a receiver may send either through arithmetic on its numbers).
    public init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= 9.2e18 {
            self = .max
        } else if value <= -9.2e18 {
            self = .min
        } else {
            self = Int(value)
        }
    }
}
