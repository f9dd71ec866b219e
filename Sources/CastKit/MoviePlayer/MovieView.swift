public import CastMedia
import Synchronization

/// The movie's place in the application's own window: the seeds' `MPMoviePlayerController.view`, which an iOS
/// program adds to its view hierarchy. On Linux the application gives the player an X11 window of its own (its
/// toolkit says the id: SDL_GetWindowWMInfo, GTK's gdk_x11_window_get_xid, Qt's winId()), usually a child window
/// sized and placed where the movie belongs; local pictures are drawn into it, fitted by `scalingMode`, with the
/// background colour where the picture does not cover. The application keeps the window's size, place and
/// visibility; CastKit never resizes, moves, maps or destroys it.
///
/// Thread-safety: every property may be read and set from any thread.
public final class MovieView: Sendable {
    private struct Settings {
        var x11Window: UInt?
        var backgroundColor: VideoColor = .black
        var changed: (@Sendable () -> Void)?
    }

    private let settings = Mutex(Settings())

    init() {}

    /// The X11 window (XID) local pictures are drawn into; nil (the default): where the player's `outputs` say (its
    /// own window, or none). Setting it while a movie plays here moves the pictures at once, at the movie's position.
    /// Full screen (`setFullscreen`) takes the movie to the whole display, as on iOS, and back into the view after.
    public var x11Window: UInt? {
        get { settings.withLock { $0.x11Window } }
        set { update { $0.x11Window = newValue } }
    }

    /// The view's own colour: black by default (the seeds' movie view is black where the movie does not cover it).
    /// `MoviePlayerController.backgroundView`'s colour, when set, is painted instead.
    public var backgroundColor: VideoColor {
        get { settings.withLock { $0.backgroundColor } }
        set { update { $0.backgroundColor = newValue } }
    }

    /// Called (outside the lock) after a change, by the player that owns this view.
    func onChange(_ action: @escaping @Sendable () -> Void) {
        settings.withLock { $0.changed = action }
    }

    private func update(_ change: (inout Settings) -> Void) {
        let changed = settings.withLock { settings in
            change(&settings)
            return settings.changed
        }
        changed?()
    }
}

/// The view behind the movie inside `MovieView` (the seeds' `backgroundView`): its colour shows where the picture
/// does not cover the view (the bars of `.aspectFit`, the space around `.none`).
///
/// Thread-safety: may be read and set from any thread.
public final class MovieBackgroundView: Sendable {
    private let color = Mutex<(value: VideoColor?, changed: (@Sendable () -> Void)?)>((nil, nil))

    init() {}

    /// The colour around the picture; nil (the default): the movie view's own colour (black).
    public var backgroundColor: VideoColor? {
        get { color.withLock { $0.value } }
        set {
            let changed = color.withLock { color in
                color.value = newValue
                return color.changed
            }
            changed?()
        }
    }

    func onChange(_ action: @escaping @Sendable () -> Void) {
        color.withLock { $0.changed = action }
    }
}
