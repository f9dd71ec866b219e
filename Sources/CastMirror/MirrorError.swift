internal import CX11

/// Why the screen cannot be captured or encoded. `isUsage`: the user's to fix (no display, no permission), which
/// `cast mirror` reports with exit code 2.
public struct MirrorError: Error, Sendable, CustomStringConvertible {
    /// What failed, for people.
    public let description: String
    /// Whether the user asked for something that cannot be (a display that does not open).
    public let isUsage: Bool

    /// Whether the X server refused a capture: the rectangle changed under the request (the window moved, changed
    /// size or closed; the screen's resolution changed), which the structure events explain a moment later.
    public let isRefusedCapture: Bool

    init(_ description: String, usage: Bool = false, refusedCapture: Bool = false) {
        self.description = description
        self.isUsage = usage
        self.isRefusedCapture = refusedCapture
    }
}

/// What the helper process `cast-mirror` does before anything else.
public enum MirrorHelper {
    /// Dies with `cast` (SIGKILL when its parent ends) and closes every descriptor but 0, 1 and 2. False when `cast`
    /// is already gone.
    public static func detach() -> Bool { cast_mirror_helper_detach() == 0 }

    /// Tells Xlib that two threads use it (the capture and the pointer's, each with a display connection of its
    /// own); before any other Xlib call.
    public static func useThreads() { _ = XInitThreads() }
}
