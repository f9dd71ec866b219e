/// Whether the mouse pointer shows over CastMedia's own window: hidden over the video and the idle screen, as mpv and
/// Kodi hide it, shown as soon as it moves, and hidden again once it has been still for `hideAfter`. The rule as a
/// value with the time as an argument; `WindowRenderer` carries out what it says (SDL_ShowCursor).
struct PointerVisibility: Equatable {
    /// How long a still pointer stays shown: mpv's `cursor-autohide` default (1000 ms).
    static let hideAfter: Duration = .seconds(1)

    /// Whether the pointer shows now.
    private(set) var isShown = false
    /// When it last moved, while shown.
    private var movedAt: ContinuousClock.Instant?

    /// The pointer moved at `now`: it shows. True when it was hidden until now.
    mutating func moved(at now: ContinuousClock.Instant) -> Bool {
        movedAt = now
        defer { isShown = true }
        return !isShown
    }

    /// Time passed: a pointer still for `hideAfter` hides. True when it hides now.
    mutating func elapsed(to now: ContinuousClock.Instant) -> Bool {
        guard isShown, let movedAt, now - movedAt >= Self.hideAfter else { return false }
        isShown = false
        self.movedAt = nil
        return true
    }
}
