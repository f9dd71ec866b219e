/// Why browsing failed. A struct wrapping a private code, so new reasons do not break users; compare with the
/// static members (`error == .daemonNotRunning`), which ignore the detail.
public struct DiscoveryError: Error, CustomStringConvertible, Equatable {
    private enum Code: Equatable {
        /// No avahi-daemon answers on the system bus (or there is no system bus).
        case daemonNotRunning
        /// avahi-client itself is not installed (it is opened on first use, not linked).
        case libraryMissing
        /// The daemon answered but the browse itself failed.
        case browseFailed
    }

    private let code: Code
    /// avahi's own words for the failure (`avahi_strerror`), or the dynamic loader's (`dlerror`), for the message.
    public let detail: String

    private init(_ code: Code, detail: String) {
        self.code = code
        self.detail = detail
    }

    /// No avahi-daemon is reachable: discovery is unavailable, but a receiver can still be reached by address.
    public static let daemonNotRunning = DiscoveryError(.daemonNotRunning, detail: "")
    /// The avahi client library is not installed: discovery and advertising are unavailable, the rest works.
    public static let libraryMissing = DiscoveryError(.libraryMissing, detail: "")
    /// The daemon answered but could not browse.
    public static let browseFailed = DiscoveryError(.browseFailed, detail: "")

    static func daemonNotRunning(_ detail: String) -> DiscoveryError {
        DiscoveryError(.daemonNotRunning, detail: detail)
    }
    static func libraryMissing(_ detail: String) -> DiscoveryError { DiscoveryError(.libraryMissing, detail: detail) }
    static func browseFailed(_ detail: String) -> DiscoveryError { DiscoveryError(.browseFailed, detail: detail) }

    /// Equal when the reasons are equal; the detail is not compared.
    public static func == (lhs: DiscoveryError, rhs: DiscoveryError) -> Bool { lhs.code == rhs.code }

    /// A sentence for the user, e.g. `avahi-daemon is not running (Daemon not running): use --to HOST:PORT`.
    public var description: String {
        switch code {
        case .daemonNotRunning, .libraryMissing: "\(reason): use --to HOST:PORT"
        case .browseFailed: reason
        }
    }

    /// The sentence without the sender's advice, for an advertiser's event.
    var reason: String {
        switch code {
        case .daemonNotRunning: "avahi-daemon is not running (\(detail))"
        case .libraryMissing: "the avahi client library (\(Avahi.libraryName)) is not installed (\(detail))"
        case .browseFailed: "browsing for receivers failed (\(detail))"
        }
    }
}
