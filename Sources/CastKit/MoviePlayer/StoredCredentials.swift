import Foundation
import FoundationNetworking

/// Credentials a program stored for a protection space (`URLCredentialStorage`, the seeds' NSURLCredentialStorage),
/// found for an http(s) URL the movie player plays, locally or on a receiver. The seeds' movie player answers a
/// server's challenge with them; FFmpeg's http client and castd's take the user and password up front instead (basic
/// or digest, as the server asks), so they are looked up before the URL is opened.
enum StoredCredentials {
    /// Whether stored credentials for `url` may travel to a receiver (in its play request): only to a receiver whose
    /// key this sender pinned when pairing (`receiverIsPinned`: the connection proved that key), never to one that
    /// merely admits anyone (`--auth none`, unpaired); and only for an `https` URL, unless the program opted in to
    /// `CastKitConfiguration.storedCredentialsOverPlainHTTP`, since the receiver then sends them over a link anyone
    /// on the way can read. A URL's own `user:password@` is the program's explicit choice and not this rule's.
    static func mayGo(toReceiver receiverIsPinned: Bool, for url: URL, overPlainHTTP: Bool) -> Bool {
        guard receiverIsPinned, let scheme = url.scheme?.lowercased() else { return false }
        return scheme == "https" || (scheme == "http" && overPlainHTTP)
    }

    /// The user and password `storage` holds for `url`'s server: a protection space with the URL's host (case
    /// insensitive), port (80 or 443 when the URL has none) and protocol, of any realm, since the realm is only known
    /// from the server's challenge. Each space gives its default credential, else its first by user name; where
    /// several spaces match, the lowest realm, then user name, is taken, so the choice never depends on a
    /// dictionary's order. (swift-corelibs-foundation keeps every URLProtectionSpace instance apart, equal or not, and
    /// makes a space's only credential its default: a program should store one credential per server.) Nil for a URL
    /// that carries its own userinfo, which wins, and for anything other than http(s).
    static func lookup(for url: URL, in storage: URLCredentialStorage = .shared) -> (user: String, password: String)? {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.user == nil, let host = url.host?.lowercased()
        else { return nil }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        let spaces = storage.allCredentials.keys.filter { space in
            space.host.lowercased() == host && space.port == port && space.protocol?.lowercased() == scheme
                && !space.isProxy()
        }
        let candidates = spaces.compactMap { space -> (realm: String, user: String, password: String)? in
            let chosen =
                storage.defaultCredential(for: space)
                ?? storage.credentials(for: space)?.sorted(by: { $0.key < $1.key }).first?.value
            guard let chosen, let user = chosen.user, !user.contains(":") else { return nil }
            return (space.realm ?? "", user, chosen.password ?? "")
        }
        return candidates.min { ($0.realm, $0.user) < ($1.realm, $1.user) }.map { ($0.user, $0.password) }
    }

    /// `url` with the stored credentials for it as its userinfo (percent-encoded), for FFmpeg's http client; `url`
    /// itself when none are stored or it carries its own.
    static func authenticated(_ url: URL, in storage: URLCredentialStorage = .shared) -> URL {
        guard let (user, password) = lookup(for: url, in: storage),
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return url }
        components.user = user
        components.password = password
        return components.url ?? url
    }
}
