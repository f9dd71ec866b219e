/// What the window shows while nothing plays: the receiver's name and under it what to do, how to pair
/// (`hint`, e.g. `To pair: cast pair "Living Room"`) or, while a pairing attempt is open, its PIN.
///
/// Drawn in white on black with SDL2_ttf and the DejaVu Sans font (see docs/video-output.md), each line centred
/// across the screen: the name on the row at `nameRow` of the screen's height, `nameSize` of the height tall; the PIN
/// line ("Pairing PIN: 0427", as castd logs it) on the row at `pinRow`, `pinSize` of the height tall; the hint, when no
/// PIN shows, on the row at `hintRow`, `hintSize` of the height tall.
public struct IdleScreen: Sendable, Equatable {
    /// The receiver's friendly name; empty shows no name.
    public var name: String
    /// The PIN of the pairing attempt that is open, nil when none is.
    public var pin: String?
    /// What to do to use the receiver, shown while no PIN is; nil shows nothing.
    public var hint: String?

    /// A screen showing `name` and, when given, `pin` (or else `hint`).
    public init(name: String = "", pin: String? = nil, hint: String? = nil) {
        self.name = name
        self.pin = pin
        self.hint = hint
    }

    /// The PIN line as shown.
    public var pinLine: String? { pin.map { "Pairing PIN: \($0)" } }
    /// The hint as shown: only while no PIN is (the PIN is then what to do).
    public var hintLine: String? { pin == nil ? hint : nil }

    /// The vertical centre of the name's line, as a fraction of the screen's height.
    public static let nameRow = 0.42
    /// The name's font size (pixels), as a fraction of the screen's height.
    public static let nameSize = 0.09
    /// The vertical centre of the PIN line, as a fraction of the screen's height.
    public static let pinRow = 0.62
    /// The PIN line's font size (pixels), as a fraction of the screen's height.
    public static let pinSize = 0.065
    /// The vertical centre of the hint, as a fraction of the screen's height (below the PIN's row).
    public static let hintRow = 0.75
    /// The hint's font size (pixels), as a fraction of the screen's height.
    public static let hintSize = 0.045
}
