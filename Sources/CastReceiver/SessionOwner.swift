/// Who started a playback session: the one whose connection hears its events directly, whose loss ends it,
/// and who is "the same sender" for the take-over policy.
///
/// Watchers (`cast watch`) and `castd --events` see every session's events whoever owns it.
enum SessionOwner: Sendable {
    /// A Cast sender: every event is pushed on its control connection.
    case castSender(MessageWriter)
    /// An AirPlay video client: it polls `/playback-info`, and nothing is written to it unasked.
    case airPlayClient(AirPlayClient)

    /// The Cast sender's connection, if a Cast sender owns the session.
    var writer: MessageWriter? {
        if case .castSender(let writer) = self { writer } else { nil }
    }

    /// Who asks, for the take-over policy: "the same sender" may replace its own session under `deny`.
    enum Identity: Hashable, Sendable {
        /// One connection: a Cast sender's control connection, or an AirPlay client's that named no session.
        case connection(ObjectIdentifier)
        /// An AirPlay client's session (`X-Apple-Session-ID`), whichever of its connections it asks on: an
        /// iPhone keeps one for its events and may show a photo or start a video on another, naming the session on
        /// each (the id that already lets any of them control the session, as on an Apple TV).
        case airPlaySession(String)
    }

    /// The identity of whoever asks for a session, naming AirPlay session `airPlaySessionID` (nil: none).
    func identity(airPlaySessionID: String?) -> Identity {
        switch self {
        case .castSender(let writer): .connection(ObjectIdentifier(writer))
        case .airPlayClient(let client):
            airPlaySessionID.map(Identity.airPlaySession) ?? .connection(ObjectIdentifier(client))
        }
    }

    /// Whether both name the same connection.
    func isSame(as other: SessionOwner) -> Bool {
        switch (self, other) {
        case (.castSender(let a), .castSender(let b)): a === b
        case (.airPlayClient(let a), .airPlayClient(let b)): a === b
        default: false
        }
    }
}
