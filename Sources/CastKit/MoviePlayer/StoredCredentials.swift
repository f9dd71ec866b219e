import Foundation
import FoundationNetworking

/// Credentials a program stored for a protection space (`URLCredentialStorage`, the seeds' NSURLCredentialStorage),
/// found for an http(s) URL the movie player plays, locally or on a receiver. The seeds' movie player answers a
/// server's challenge with them; FFmpeg's http client and castd's take the user and password up front instead (basic
/// or digest, as the server asks), so they are looked up before the URL is opened.
enum StoredCredentials {
    /// The user and password `storage` holds for `url`'s server: a protection space with the URL's host (case
    /// insensitive), port (80 or 443 when the URL has none) and protocol, of any realm, since the realm is only known
    /// from the server's challenge. Where several match, the space's default credential wins, then the realm's and
    /// user's order (so that the choice does not depend on a dictionary's order). Nil for a URL that carries its own
    /// userinfo, which wins, and for anything other than http(s).
    static func lookup(for url: URL, in storage: URLCredentialStorage = .shared) -> (user: String, password: String)? {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.user == nil, let host = url.host?.lowercased()
        else { return nil }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        let spaces = storage.allCredentials.keys.filter { space in
            space.host.lowercased() == host && space.port == port && space.protocol?.lowercased() == scheme
                && !space.isProxy()
        }
        for space in spaces.sorted(by: { ($0.realm ?? "") < ($1.realm ?? "") }) {
            let chosen = storage.defaultCredential(for: space)
                ?? storage.credentials(for: space)?.sorted(by: { $0.key < $1.key }).first?.value
            if let chosen, let user = chosen.user, !user.contains(":") {
                return (user, chosen.password ?? "")
            }
        }
        return nil
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
