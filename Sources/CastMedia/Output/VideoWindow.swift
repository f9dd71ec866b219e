public import CastProtocol
import Foundation

/// The process's video window, held open while this object lives: between playbacks it shows the idle screen, and a
/// `Player` with `.window` or `.fullscreen` video shows its pictures in it.
///
/// Players open the window themselves and close it when they finish; a receiver that wants the window up while
/// nothing plays (castd with `--video-out window`) holds a `VideoWindow`. Closing the window with the window
/// manager's close button hides it without ending anything; the next playback shows it again.
public final class VideoWindow: @unchecked Sendable {
    // Invariant: `token` and `asideCount` are read and written only under `lock`.
    private let lock = NSLock()
    private var token: Int?
    private var asideCount = 0

    /// Opens the window (or takes the one already open) in a window or on the whole display. Throws `MediaError`
    /// when no display is available.
    public init(fullscreen: Bool = false, scalingMode: ScalingMode = .aspectFit) throws {
        token = try WindowOutput.shared.acquire(mode: fullscreen ? .fullscreen : .windowed, scaling: scalingMode)
    }

    deinit { close() }

    /// How pictures are fitted to the window from now on; the picture on screen changes at once.
    public func setScalingMode(_ mode: ScalingMode) {
        WindowOutput.shared.setScalingMode(mode)
    }

    /// What the window shows while nothing plays (the receiver's name, the PIN of an open pairing attempt); the
    /// screen changes at once when idle. The window is the process's one window, so this is process-wide.
    public func setIdleScreen(_ screen: IdleScreen) {
        WindowOutput.shared.setIdleScreen(screen)
    }

    /// Hides the window while another process shows video in a window of its own (castd's decoder worker), so that
    /// the two never fight over the screen. The window stays open (hidden, not closed: see `comeBack`). Counted: the
    /// window comes back once every `stepAside` was matched by a `comeBack` (a worker still stopping while the next
    /// one plays).
    public func stepAside() {
        lock.withLock {
            asideCount += 1
            if asideCount == 1 { WindowOutput.shared.setAside(true) }
        }
    }

    /// Shows the window again after `stepAside`, with what it showed before (the idle screen, as it is now).
    public func comeBack() {
        lock.withLock {
            guard asideCount > 0 else { return }
            asideCount -= 1
            if asideCount == 0 { WindowOutput.shared.setAside(false) }
        }
    }

    /// Lets the window go; it closes when no player uses it either. Idempotent.
    public func close() {
        guard
            let token = lock.withLock({ () -> Int? in
                defer { token = nil }
                return token
            })
        else { return }
        WindowOutput.shared.release(token)
    }
}
