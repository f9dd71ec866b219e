import CastBase
public import CastProtocol
import CastSecurity

extension ReceiverConnection {
    /// Measures the receiver's CLOCK_MONOTONIC against ours with `exchanges` time requests, one after another (8 take
    /// well under a millisecond each on a LAN). Nil when the receiver gave no believable reply.
    /// - Throws: `CastError` `.connectionLost` when the connection fails or the receiver answers with something else
    ///   (an older receiver answers `unknownMessageType` and closes).
    public func measureClock(exchanges: Int = 8) throws(CastError) -> ClockProbe.Measurement? {
        var probe = ClockProbe(exchanges: exchanges)
        do {
            return try probe.measure(over: ReceiverClockTransport(connection: self))
        } catch let error as CastError {
            throw error
        } catch {
            throw CastError(.connectionLost, "\(printable(welcome.name)) broke the clock exchange: \(error)")
        }
    }

    /// Sends a time request stamped once the write lock is held, just before its bytes are written.
    func sendTimeRequest() throws(CastError) -> Int64 {
        var sent: Int64 = 0
        try send { () -> Message in
            sent = MonotonicClock.nanoseconds()
            return .timeRequest(TimeRequest(sent: sent))
        }
        return sent
    }
}

/// The control connection as the clock probe's transport: events pushed meanwhile (a playing or watching
/// connection) are passed over; anything else in place of the reply is an error.
struct ReceiverClockTransport: ClockTransport {
    let connection: ReceiverConnection

    func exchange() throws -> (sent: Int64, reply: TimeReply, returned: Int64) {
        let sent = try connection.sendTimeRequest()
        while true {
            let action = try connection.nextAction()
            let returned = MonotonicClock.nanoseconds()
            switch action {
            case .reply(.timeReply(let reply)), .timeReply(let reply): return (sent, reply, returned)
            case .event: continue
            case let other:
                throw CastError(
                    .connectionLost, "\(printable(connection.welcome.name)) sent \(other) while timeReply was expected")
            }
        }
    }
}
