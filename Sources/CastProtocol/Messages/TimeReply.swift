/// Receiver → sender: the answer to a `TimeRequest`, the second half of a clock exchange. `sent` is the request's
/// stamp echoed; `received` is the receiver's CLOCK_MONOTONIC when it read the request's frame off the connection
/// and `replied` its clock just before it wrote this reply, both in nanoseconds (docs/protocol.md, "Clock
/// exchange"). JSON: `{"sent":123456789,"received":7000000123,"replied":7000000456}`.
public struct TimeReply: Codable, Sendable, Equatable {
    /// The request's `sent`, echoed.
    public var sent: Int64
    /// The receiver's clock when the request arrived, nanoseconds.
    public var received: Int64
    /// The receiver's clock when it sent this reply, nanoseconds (≥ `received`).
    public var replied: Int64

    /// Creates a reply.
    public init(sent: Int64, received: Int64, replied: Int64) {
        self.sent = sent
        self.received = received
        self.replied = replied
    }

    /// Why the reply cannot be right (nil when it may be).
    var problem: String? {
        guard sent >= 0, received >= 0, replied >= 0 else { return "stamps must be ≥ 0 nanoseconds" }
        guard replied >= received else { return "replied before it received" }
        return nil
    }
}

extension TimeReply: MessageBody {
    func check() throws(ProtocolError) {
        try reportProblem(problem, in: "timeReply")
    }
}
