/// Sender → receiver: what time is it on your clock? The first half of a clock exchange (NTP's four timestamps):
/// `sent` is the asker's CLOCK_MONOTONIC in nanoseconds, taken just before the request is written; the receiver
/// echoes it in its `TimeReply` so that the asker pairs the reply with its request. JSON: `{"sent":123456789}`.
public struct TimeRequest: Codable, Sendable, Equatable {
    /// The asker's clock when it sent the request, nanoseconds (≥ 0).
    public var sent: Int64

    /// Creates a request stamped `sent`.
    public init(sent: Int64) { self.sent = sent }

    /// Why the request may not be answered (nil when it may).
    var problem: String? { sent >= 0 ? nil : "sent must be ≥ 0 nanoseconds" }
}

extension TimeRequest: MessageBody {
    func check() throws(ProtocolError) {
        try reportProblem(problem, in: "timeRequest")
    }
}
