/// An error from CastSystem or CastSecurity: a socket call, OpenSSL, a key file or a timeout (defined here, in the OS
/// layer, so that both throw one type; the OpenSSL half of it, `SecurityError.openSSL`, is CastSecurity's).
///
/// Match on `kind` (`error.kind == .timedOut`); `description` carries the details
/// (the failing function, `errno` text, OpenSSL's error string, the file and its mode).
public struct SecurityError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, in broad terms. New kinds may be added without breaking callers.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Code: Hashable, Sendable {
            case system, tls, timedOut, keyFile, addressResolution, closed
            case authenticationFailed, invalidPeerValue, trustStore, refusedAddress
        }

        private let code: Code

        /// A system call failed; `errno` and `function` say which and why.
        public static let system = Kind(code: .system)
        /// OpenSSL failed (handshake, certificate, key, exporter); the message holds OpenSSL's error string.
        public static let tls = Kind(code: .tls)
        /// A deadline passed: connect, TLS handshake, read or write.
        public static let timedOut = Kind(code: .timedOut)
        /// The identity key file is unusable: too permissive, unreadable or not an Ed25519 key.
        public static let keyFile = Kind(code: .keyFile)
        /// A host name or address could not be resolved (`getaddrinfo`).
        public static let addressResolution = Kind(code: .addressResolution)
        /// The connection was used after `close()`.
        public static let closed = Kind(code: .closed)
        /// The peer's SRP proof did not match ours: a wrong PIN or password, or a session relayed by a man in
        /// the middle (the proofs cover the TLS exporter value, so the two cannot be told apart, by design).
        public static let authenticationFailed = Kind(code: .authenticationFailed)
        /// The peer sent an SRP value that the protocol forbids (`A % N == 0`, `B % N == 0`, `u == 0`, a value
        /// not below `N`, an empty or oversized salt): a broken or malicious peer, not a wrong PIN.
        public static let invalidPeerValue = Kind(code: .invalidPeerValue)
        /// A trust store file (paired senders, known receivers) is unusable: corrupt, too large, too many
        /// entries, or readable by group or others. The file is left untouched for the user to inspect.
        public static let trustStore = Kind(code: .trustStore)

        /// An outgoing connection's every address is one its `AddressPolicy` refuses (loopback, this box's own, ...).
        public static let refusedAddress = Kind(code: .refusedAddress)

        /// The kind's name, e.g. `timedOut`.
        public var description: String { "\(code)" }
    }

    /// What went wrong, in broad terms.
    public let kind: Kind
    /// The C function that failed, when there is one (`connect`, `SSL_do_handshake`, ...).
    public let function: String?
    /// The `errno` value for `.system` errors (and some `.tls` errors caused by the socket), else `nil`.
    public let errno: Int32?
    /// A human-readable explanation, without the function name and errno text.
    public let message: String

    package init(_ kind: Kind, function: String? = nil, errno: Int32? = nil, _ message: String) {
        self.kind = kind
        self.function = function
        self.errno = errno
        self.message = message
    }

    /// One line: the message, then the function and `strerror(errno)` when known.
    public var description: String {
        var text = message
        if let function {
            text += " (\(function)" + (errno.map { ": \(errnoText($0))" } ?? "") + ")"
        } else if let errno {
            text += " (\(errnoText(errno)))"
        }
        return text
    }
}
