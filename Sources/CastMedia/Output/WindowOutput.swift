internal import CSDL2
import CastBase
import CastProtocol
import Foundation

/// The process's video window: one SDL window, driven by one thread of its own, shared by everyone who shows video.
///
/// SDL is process-global and must be driven from one thread, so there is one `WindowOutput` (`shared`) and one SDL
/// thread. Users `acquire` it (which starts SDL and opens the window on first use, or throws a `MediaError` when no
/// display can be opened) and `release` it; when the last user leaves, the window is destroyed and SDL shut down, so
/// that no display connection outlives its users (`waitUntilClosed` waits for that). Between playbacks, while someone still holds it, the window shows the idle
/// screen (`IdleScreen`: the receiver's name and a pairing PIN on black; 1280×720 when windowed).
///
/// Other threads never touch SDL objects: they post requests into the `Requests` in the monitor (the latest frame,
/// the display mode, the scaling mode) and wake the SDL thread with an SDL user event. A frame that arrives before the
/// previous one was drawn replaces it: the window shows the latest picture, it never falls behind.
///
/// Closing the window (the window manager's close button, or SDL_QUIT) does not end the process or playback: the
/// window is hidden, playback goes on, and the next user to acquire the window shows it again.
///
/// Thread-safety: everything shared is in one `Monitor`. SDL calls happen only on the SDL thread, except SDL_PushEvent
/// (thread-safe), which is made only while `phase == .running`: the SDL thread leaves `.running` inside the monitor
/// before it shuts SDL down.
final class WindowOutput: Sendable {
    static let shared = WindowOutput()

    /// How the window covers the display.
    enum DisplayMode: Sendable, Equatable {
        /// A window at the video's natural size.
        case windowed
        /// The whole display (SDL_WINDOW_FULLSCREEN_DESKTOP).
        case fullscreen
        /// The application's own window (its X11 id), with the colour around the picture.
        case hosted(HostedVideo)
    }

    /// The SDL thread's life.
    private enum Phase: Equatable {
        /// No SDL thread; SDL is not initialised.
        case stopped
        /// The SDL thread is opening the display.
        case starting
        /// The window is open; requests are served.
        case running
        /// The last user left; the SDL thread is shutting SDL down.
        case stopping
    }

    /// What other threads ask of the SDL thread.
    struct Requests {
        /// Users by token, with the display mode each asked for; the newest one decides the mode.
        var users: [Int: DisplayMode] = [:]
        /// A picture to draw, not yet taken by the SDL thread.
        var frame: Frame?
        /// Lines under the picture (a song's title and artist under its cover art); empty for none.
        var caption: [String] = []
        /// A mirrored sender's pointer (its last shape kept), and the number of that shape (one more each new one).
        var cursor: MirrorCursor?
        var cursorShape = 0
        /// True after the stream that drew the last picture ended: show the idle screen.
        var idle = false
        var scaling: ScalingMode = .aspectFit
        /// What the idle screen shows (kept while SDL stops and starts again).
        var idleScreen = IdleScreen()
        /// The window should be shown (again): set by every acquire, cleared by the SDL thread.
        var show = false
        /// The window is hidden because another process shows video in a window of its own (castd's decoder
        /// worker); acquiring does not show it until this is cleared, which shows it.
        var aside = false
        /// Tests: behave as if the window manager's close button was pressed.
        var simulateClose = false
        /// Where the SDL thread reports what fails: the newest user's log.
        var log = MediaLog.silent
    }

    /// What the users and the SDL thread share.
    private struct State {
        var phase = Phase.stopped
        var requests = Requests()
        var nextToken = 0
        /// The SDL thread's error when it could not open the display.
        var startError: MediaError?
        /// The SDL user event that wakes the SDL thread.
        var wakeEvent: UInt32 = 0
        /// A wake event is queued and not yet seen: later wakes need not queue another.
        var wakePending = false
        /// How many times the window was closed by its user (tests).
        var closedCount = 0
        /// The SDL renderer that draws ("software", "opengl", …; tests).
        var rendererName = ""

        /// Wakes the SDL thread to look at the requests.
        mutating func wake() {
            guard phase == .running, !wakePending else { return }
            wakePending = true
            _ = cast_sdl_push_user_event(wakeEvent)
        }
    }

    private let state = Monitor(State())

    /// How many times the window was closed by its user (tests).
    var closedByUserCount: Int { state.withLock { $0.closedCount } }

    /// The SDL renderer that draws while the window is open ("software", "opengl", …; tests).
    var rendererName: String { state.withLock { $0.rendererName } }

    /// Opens the window (and SDL) when nobody holds it yet, shows it in `mode`, and returns the token for `release`.
    /// Throws `MediaError` when no display is available (no X11 or Wayland display, no KMS/DRM device).
    func acquire(mode: DisplayMode, scaling: ScalingMode?, log: MediaLog = .silent) throws -> Int {
        while true {
            // The user is added in the same hold that sees the window running, so that the SDL thread, which stops
            // when it finds no user, cannot stop in between.
            let token = try state.withLock(when: { $0.phase != .stopping && $0.phase != .starting }) {
                state throws -> Int? in
                if let failure = state.startError {
                    state.startError = nil
                    throw failure
                }
                guard state.phase == .running else {
                    state.phase = .starting
                    return nil
                }
                state.nextToken += 1
                state.requests.users[state.nextToken] = mode
                state.requests.log = log
                state.requests.show = true
                if let scaling { state.requests.scaling = scaling }
                state.wake()
                return state.nextToken
            }
            if let token { return token }
            startDetachedThread(name: "CastMedia.window", stackSize: 4 << 20) { [self] in runSDLThread(mode: mode) }
        }
    }

    /// Gives the window back; returns at once. After the last user's release the SDL thread destroys the window and
    /// shuts SDL down (leaving full screen can take SDL a while: that must not delay the end of playback).
    func release(_ token: Int) {
        state.withLock { state in
            guard state.requests.users.removeValue(forKey: token) != nil else { return }
            state.wake()
        }
    }

    /// Blocks until SDL is shut down, when nobody holds the window: afterwards no connection to the display is open
    /// (tests stop their X server after this).
    func waitUntilClosed() {
        state.wait(until: { !$0.requests.users.isEmpty || $0.phase == .stopped })
    }

    /// Changes the requests and wakes the SDL thread.
    private func request(_ change: (inout Requests) -> Void) {
        state.withLock { state in
            change(&state.requests)
            state.wake()
        }
    }

    /// Draws `frame` as soon as the SDL thread can (replacing a picture not drawn yet), with `caption` under it.
    func show(_ frame: Frame, caption: [String] = []) {
        request { requests in
            requests.frame = frame
            requests.caption = caption
            requests.idle = false
        }
    }

    /// The stream that was showing ended: the window goes back to the idle screen.
    func showIdle() {
        request { requests in
            requests.frame = nil
            requests.idle = true
            requests.cursor = nil
        }
    }

    /// Moves the mirrored sender's pointer, drawn over the picture, and changes its shape when `cursor` has one.
    func showCursor(_ cursor: MirrorCursor) {
        request { requests in
            var cursor = cursor
            if cursor.shape == nil {
                cursor.shape = requests.cursor?.shape
            } else {
                requests.cursorShape += 1
            }
            requests.cursor = cursor
        }
    }

    /// Changes how pictures are fitted to the window; takes effect at once, also on the picture on screen.
    func setScalingMode(_ mode: ScalingMode) { request { $0.scaling = mode } }

    /// Hides the window (`true`) while another process shows video in a window of its own, or shows it again
    /// (`false`). The window stays open: SDL, the display connection and the idle screen's text are kept, so coming
    /// back is one map request and cannot fail the way opening a display can.
    func setAside(_ aside: Bool) { request { $0.aside = aside } }

    /// Changes what the idle screen shows (the receiver's name, a pairing PIN); drawn at once when idle.
    func setIdleScreen(_ screen: IdleScreen) { request { $0.idleScreen = screen } }

    /// What the idle screen shows.
    var idleScreen: IdleScreen { state.withLock { $0.requests.idleScreen } }

    /// The current scaling mode.
    var scalingMode: ScalingMode { state.withLock { $0.requests.scaling } }

    /// Tests: acts as the window manager's close button does.
    func simulateUserClose() { request { $0.simulateClose = true } }

    // MARK: The SDL thread

    /// Starts SDL with a window for `mode`, the first user's.
    private func runSDLThread(mode: DisplayMode) {
        let renderer: WindowRenderer
        do {
            let event = try WindowRenderer.initializeSDL()
            renderer = try WindowRenderer(mode: mode == .fullscreen ? .windowed : mode)
            state.withLock { state in
                state.wakeEvent = event
                state.rendererName = renderer.rendererName
                state.phase = .running
            }
        } catch {
            SDL_Quit()
            state.withLock { state in
                state.startError = error as? MediaError ?? MediaError.other("\(error)")
                state.phase = .stopped
            }
            return
        }
        serve(renderer).destroy()
        SDL_Quit()
        state.withLock { $0.phase = .stopped }
    }

    /// The SDL thread's loop: waits for SDL events or requests, applies them, draws. Returns the renderer in use (a
    /// user who wants another kind of window gets a new one) when the last user left.
    private func serve(_ first: WindowRenderer) -> WindowRenderer {
        var renderer = first
        var event = SDL_Event()
        var aside = false
        while true {
            var redraw = false
            if SDL_WaitEventTimeout(&event, 250) != 0 {
                repeat {
                    switch renderer.handle(event) {
                    case .nothing: break
                    case .redraw: redraw = true
                    case .closedByUser: state.withLock { $0.closedCount += 1 }
                    }
                } while SDL_PollEvent(&event) != 0
            }
            let (work, mode, leave) = state.withLock { state -> (Requests, DisplayMode?, Bool) in
                state.wakePending = false
                let work = state.requests
                state.requests.frame = nil
                state.requests.show = false
                state.requests.simulateClose = false
                if state.requests.users.isEmpty {
                    state.phase = .stopping
                    return (work, nil, true)
                }
                return (work, state.requests.users.max { $0.key < $1.key }?.value, false)
            }
            if leave { return renderer }
            renderer.log = work.log
            renderer.hideStillPointer()
            if work.simulateClose { renderer.pushCloseEvent() }
            if let mode, !renderer.canShow(mode) {
                // Into an application's window, out of it, or into another one: the next frame brings the picture.
                do {
                    let next = try WindowRenderer(mode: mode == .fullscreen ? .windowed : mode)
                    renderer.destroy()
                    renderer = next
                    state.withLock { $0.rendererName = next.rendererName }
                    if !aside { renderer.show() }
                    redraw = true
                } catch {
                    work.log("\(error)")
                }
            }
            if let mode, renderer.canShow(mode) { redraw = renderer.setDisplayMode(mode) || redraw }
            if work.aside != aside {
                aside = work.aside
                if aside {
                    renderer.hide()
                } else {
                    renderer.show()
                    redraw = true
                }
            } else if work.show && !aside {
                renderer.show()
            }
            if renderer.setScaling(work.scaling) { redraw = true }
            if renderer.setIdleScreen(work.idleScreen) { redraw = true }
            if work.idle, !renderer.isIdle {
                renderer.becomeIdle()
                redraw = true
            }
            if renderer.cursor.set(work.cursor, shapeNumber: work.cursorShape) { redraw = true }
            if let frame = work.frame {
                renderer.upload(frame)
                renderer.caption = work.caption
                redraw = true
            }
            if redraw { renderer.draw() }
        }
    }
}
