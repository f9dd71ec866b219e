import CastMedia
import CastSecurity
import CastSystem

/// How a session's URL reaches the network, by who asked for it (docs/security.md, "SSRF"). A paired sender's URL
/// may reach any address and be read with any demuxer: pairing is the trust decision. A stranger's (an AirPlay
/// client's) reaches only what `AddressPolicy.strangers` allows, and is read only with
/// `URLInput.strangerFormatWhitelist`.
///
/// With decoder isolation (castd's default) the worker has a network of its own whose only interface is its
/// loopback; castd's `CheckedProxy` answers there with `policy`, so every connection the worker makes, whatever
/// opened it, is one the proxy checks and makes. Without isolation (the engine inside castd) a stranger's URL goes
/// through `sharedProxy`, a paired sender's directly.
struct URLAccess: Sendable {
    /// Where the proxy may connect.
    var policy: AddressPolicy
    /// The demuxers the URL may be read with.
    var formats: URLFormats
    /// For the engine inside castd: the proxy its connections go through, nil for direct.
    var sharedProxy: String?
    /// Hears each connection the proxy refused ("HOST port N: why"), for castd's log.
    var onRefusal: @Sendable (String) -> Void

    /// A paired sender's URL.
    static let paired = URLAccess(policy: .any, formats: .any, sharedProxy: nil, onRefusal: { _ in })

    /// A stranger's URL: checked addresses and formats; `sharedProxy` for the engine inside castd.
    static func stranger(sharedProxy: String?, onRefusal: @escaping @Sendable (String) -> Void) -> URLAccess {
        URLAccess(policy: .strangers, formats: .strangers, sharedProxy: sharedProxy, onRefusal: onRefusal)
    }
}

extension StartedWorker {
    /// Gives the worker what it needs of the network for `start`: for a URL, castd's proxy answering on the worker's
    /// listener with `access`'s policy, whose address (on the worker's own loopback) and `access`'s formats go into
    /// `start`; for served media, nothing (the listener is closed: the worker can then connect nowhere). A stranger's
    /// URL is refused to a worker that shares castd's network (its private network could not be made), where a
    /// nested input could connect around the proxy.
    func network(for start: inout WorkerStart, access: URLAccess) throws -> CheckedProxy? {
        guard start.url != nil else {
            closeListener()
            return nil
        }
        start.urlFormats = access.formats == .any ? nil : access.formats
        if access.policy != .any, let problem = report.networkProblem {
            closeListener()
            throw WorkerFailure(
                "a stranger's URL is not played: the decoder process shares castd's network (\(problem))")
        }
        guard let listener, let port = report.proxyPort else {
            throw WorkerFailure("the decoder process has no listener for its URL's proxy")
        }
        let proxy = CheckedProxy(listener: listener, port: port, policy: access.policy, onRefusal: access.onRefusal)
        start.urlProxy = proxy.url
        return proxy
    }
}
