import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Who the library is to receivers: where its identity and paired receivers live, and the name receivers show.
/// The defaults are those of the `cast` command, so a program and `cast` share pairings.
public struct CastKitConfiguration: Sendable, Equatable {
    /// The sender's directory: its Ed25519 identity and the receivers it paired with (created on first use).
    public var configDirectory: String
    /// The name receivers show and log for this sender.
    public var senderName: String
    /// Whether credentials stored in `URLCredentialStorage` for a plain `http` URL go to a paired receiver that plays
    /// it (they then cross the network readable by anyone on the way). Off by default: only an `https` URL's stored
    /// credentials go, and only to a receiver whose key was pinned by pairing, never to an unpaired one.
    public var storedCredentialsOverPlainHTTP: Bool

    /// A configuration; by default `$XDG_CONFIG_HOME/cast` (else `~/.config/cast`) and `USER@HOST`.
    public init(
        configDirectory: String = CastKitConfiguration.defaultConfigDirectory,
        senderName: String = CastKitConfiguration.defaultSenderName,
        storedCredentialsOverPlainHTTP: Bool = false
    ) {
        self.configDirectory = configDirectory
        self.senderName = senderName
        self.storedCredentialsOverPlainHTTP = storedCredentialsOverPlainHTTP
    }

    /// `$XDG_CONFIG_HOME/cast`, or `$HOME/.config/cast`.
    public static var defaultConfigDirectory: String {
        let env = ProcessInfo.processInfo.environment
        return (env["XDG_CONFIG_HOME"] ?? ((env["HOME"] ?? "/tmp") + "/.config")) + "/cast"
    }

    /// `USER@HOST`.
    public static var defaultSenderName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        let host =
            gethostname(&buffer, buffer.count) == 0
            ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "unknown"
        return "\(ProcessInfo.processInfo.environment["USER"] ?? "user")@\(host)"
    }
}
