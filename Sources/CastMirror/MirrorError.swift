internal import CX11

/// Why the screen cannot be captured or encoded. `isUsage`: the user's to fix (no display, no permission), which
/// `cast mirror` reports with exit code 2.
public struct MirrorError: Error, Sendable, CustomStringConvertible {
    /// What failed, for people.
    public let description: String
    /// Whether the user asked for something that cannot be (a display that does not open).
    public let isUsage: Bool

    init(_ description: String, usage: Bool = false) {
        self.description = description
        self.isUsage = usage
    }
}

/// What the helper process `cast-mirror` does before anything else.
public enum MirrorHelper {
    /// Dies with `cast` (SIGKILL when its parent ends) and closes every descriptor but 0, 1 and 2. False when `cast`
    /// is already gone.
    public static func detach() -> Bool { cast_mirror_helper_detach() == 0 }
}
