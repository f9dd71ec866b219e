import Foundation

/// Where the engine's own remarks go: things that do not stop playback but that an operator may want to know (a
/// subtitle track it cannot draw, an SDL call that failed). One line each, without a trailing newline.
///
/// A value passed in (`PlayerConfiguration.log`, `VideoWindow(log:)`), never a global: a library prints nothing of its
/// own on its host program's standard error, so the default is `.silent`; castd passes `.standardError`.
public struct MediaLog: Sendable {
    /// Receives one line.
    public let write: @Sendable (String) -> Void

    /// A log that hands each line to `write`.
    public init(_ write: @escaping @Sendable (String) -> Void) {
        self.write = write
    }

    /// Drops every line (the default).
    public static let silent = MediaLog { _ in }

    /// Writes `castmedia: LINE` on standard error (castd's logs).
    public static let standardError = MediaLog { line in
        FileHandle.standardError.write(Data("castmedia: \(line)\n".utf8))
    }

    /// Logs `line`.
    func callAsFunction(_ line: String) { write(line) }
}
