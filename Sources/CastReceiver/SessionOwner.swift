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

    /// The connection's identity: equal for the same Cast sender's connection or the same AirPlay client.
    var identity: ObjectIdentifier {
        switch self {
        case .castSender(let writer): ObjectIdentifier(writer)
        case .airPlayClient(let client): ObjectIdentifier(client)
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
