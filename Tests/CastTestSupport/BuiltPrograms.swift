public import Foundation

/// Where the package's built programs (`castd`, `cast`, the examples) are for a test.
public enum BuiltPrograms {
    /// `CAST_BIN_DIR` when set, else the first folder holding `castd` from the test bundle up (SwiftPM builds them
    /// beside it).
    public static let directory: URL = {
        if let dir = ProcessInfo.processInfo.environment["CAST_BIN_DIR"] { return URL(fileURLWithPath: dir) }
        var url = Bundle.main.bundleURL
        while url.path != "/" && !FileManager.default.fileExists(atPath: url.appendingPathComponent("castd").path) {
            url = url.deletingLastPathComponent()
        }
        return url
    }()
}
