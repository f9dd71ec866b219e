/// A failure a sender reports to its user. `cast` maps each kind to one of its exit codes (docs/user-guide.md); the
/// library has no exit codes of its own.
/// Equatable: two errors are the same when their kind and message are (the group's rules compare their actions).
public struct CastError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What failed, in the user's words.
    public struct Kind: Hashable, Sendable {
        fileprivate enum Code: Hashable, Sendable {
            case usage, playback, noSuchReceiver, notAuthorised, connectionLost, discovery, busy
        }
        fileprivate let code: Code

        /// The command line was wrong.
        public static let usage = Kind(code: .usage)
        /// Playback failed on the receiver.
        public static let playback = Kind(code: .playback)
        /// No receiver matched the name, or none is in sight.
        public static let noSuchReceiver = Kind(code: .noSuchReceiver)
        /// The receiver refused us: pairing is needed or was refused.
        public static let notAuthorised = Kind(code: .notAuthorised)
        /// The receiver could not be reached, or the connection broke.
        public static let connectionLost = Kind(code: .connectionLost)
        /// mDNS is not available (no avahi-daemon).
        public static let discovery = Kind(code: .discovery)
        /// The receiver plays for another sender and its take-over policy is `deny`.
        public static let busy = Kind(code: .busy)
    }

    /// What failed.
    public let kind: Kind
    /// A message for people.
    public let message: String

    /// Creates an error.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
