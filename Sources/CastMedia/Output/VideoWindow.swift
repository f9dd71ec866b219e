public import CastProtocol
import Foundation
import Synchronization

/// The process's video window, held open while this object lives: between playbacks it shows the idle screen, and a
/// `Player` with `.window` or `.fullscreen` video shows its pictures in it.
///
/// Players open the window themselves and close it when they finish; a receiver that wants the window up while
/// nothing plays (castd with `--video-out window`) holds a `VideoWindow`. Closing the window with the window
/// manager's close button hides it without ending anything; the next playback shows it again.
public final class VideoWindow: Sendable {
    /// The window's hold on the process's window (`WindowOutput`), and how many `stepAside`s are not matched yet.
    private let state: Mutex<(token: Int?, asideCount: Int)>

    /// Opens the window (or takes the one already open) in a window or on the whole display. Throws `MediaError`
    /// when no display is available. `log` hears what goes wrong drawing in it (silent by default).
    public init(fullscreen: Bool = false, scalingMode: ScalingMode = .aspectFit, log: MediaLog = .silent) throws {
        let token = try WindowOutput.shared.acquire(
            mode: fullscreen ? .fullscreen : .windowed, scaling: scalingMode, log: log)
        state = Mutex((token, 0))
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
        state.withLock { state in
            state.asideCount += 1
            if state.asideCount == 1 { WindowOutput.shared.setAside(true) }
        }
    }

    /// Shows the window again after `stepAside`, with what it showed before (the idle screen, as it is now).
    public func comeBack() {
        state.withLock { state in
            guard state.asideCount > 0 else { return }
            state.asideCount -= 1
            if state.asideCount == 0 { WindowOutput.shared.setAside(false) }
        }
    }

    /// Lets the window go; it closes when no player uses it either. Idempotent.
    public func close() {
        guard
            let token = state.withLock({ state -> Int? in
                defer { state.token = nil }
                return state.token
            })
        else { return }
        WindowOutput.shared.release(token)
    }
}
