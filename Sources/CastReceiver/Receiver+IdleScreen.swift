import CastMedia
import CastProtocol

/// The idle screen: with video out `window` or `fullscreen`, the window held open between sessions shows the name and
/// a pairing PIN.
///
/// Thread-safety: the window, the name and the PIN are in `state` (the receiver's `Mutex`); the window is drawn on
/// outside it (`VideoWindow` has its own lock).
extension Receiver {
    /// With video out `window` or `fullscreen`, holds the window open from the start, so that it shows the idle
    /// screen (the name, a pairing PIN) whenever nothing plays. Without a display the receiver still runs: each
    /// playback then reports the error itself.
    func openIdleScreen() {
        let fullscreen: Bool
        switch configuration.engine.video {
        case .window: fullscreen = false
        case .fullscreen: fullscreen = true
        case .none, .framemd5, .hosted: return
        }
        do {
            let window = try VideoWindow(
                fullscreen: fullscreen, scalingMode: state.withLock { $0.output.scaling }, log: .standardError)
            state.withLock { $0.window = window }
            updateIdleScreen()
        } catch {
            logger.warning("no idle screen: \(error)")
        }
    }

    /// Shows the current name and PIN on the idle screen, or while no PIN is open, how to use the receiver.
    func updateIdleScreen() {
        let auth = configuration.auth
        let (window, screen) = state.withLock { state in
            let hint = Self.idleHint(name: state.name, auth: auth)
            return (state.window, IdleScreen(name: state.name, pin: state.pin, hint: hint))
        }
        window?.setIdleScreen(screen)
    }

    /// What the idle screen says to do: how to pair, or with `--auth none` how to play.
    static func idleHint(name: String, auth: AuthMode) -> String {
        auth == .none ? "To play: cast send FILE --to \"\(name)\"" : "To pair: cast pair \"\(name)\""
    }
}
