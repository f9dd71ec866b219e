internal import CX11
import Glibc

/// An X11 display's root window, or one window of it, captured through MIT-SHM (`XShmGetImage`: the server writes the
/// pixels straight into shared memory, no copy through the socket), with XDamage telling whether anything changed
/// since the last capture: an idle desktop costs one round trip per frame and no encoding. A display without MIT-SHM
/// (one reached over the network, or a server without the extension) or whose shared memory cannot be attached (an
/// X server in another IPC namespace) is captured with `XGetImage` instead: the pixels come through the socket, a copy
/// more per picture (`usesSharedMemory` says which).
///
/// A window is captured as the rectangle of the screen it covers (what is on top of it shows too, as on the screen),
/// clipped to the screen. The X server's structure events say when the rectangle moves or changes size (the window
/// resized, or the screen's resolution changed: `followGeometry` takes the new size) and when the window is gone
/// (`isClosed`: destroyed or unmapped), without a round trip per picture.
///
/// Thread-safety: one thread uses it (Xlib is not initialised for threads here).
public final class ScreenCapture {
    private let display: OpaquePointer
    private let root: Window
    /// The window captured; nil for the whole screen.
    private let window: Window?
    /// The image in memory shared with the X server, and that memory (on the heap: the image keeps a pointer to it,
    /// `obdata`, for every request); nil when the capture goes through `XGetImage`.
    private var shared: (image: UnsafeMutablePointer<XImage>, segment: UnsafeMutablePointer<XShmSegmentInfo>)?
    /// Whether the pictures come through shared memory (MIT-SHM) rather than the socket (`XGetImage`).
    public var usesSharedMemory: Bool { shared != nil }
    private let damage: Damage
    private let damageEvent: Int32
    /// Where the captured rectangle starts on the screen.
    private var origin = (x: 0, y: 0) {
        didSet { sharedOrigin.value = origin }
    }
    /// The same, for the pointer's thread (`CursorTracker`): the pointer is placed in the picture's pixels.
    public let sharedOrigin = CursorTracker.Origin()
    /// The captured rectangle's size in pixels (the screen's, or the window's on the screen).
    public private(set) var width: Int
    /// The captured rectangle's size in pixels.
    public private(set) var height: Int
    /// Whether the next capture needs the pixels (the first does, then what XDamage reports).
    private var dirty = true
    /// Whether a structure event said the rectangle may have moved or changed size since it was last read.
    private var moved = false
    /// Whether the window captured was destroyed or unmapped (never for the whole screen).
    public private(set) var isClosed = false

    /// Opens `displayName` (nil: `$DISPLAY`), to capture the window `window` (an X11 window id, as `xwininfo` shows
    /// it) or, when nil, the whole screen.
    /// - Throws: `MirrorError` with `isUsage` when the display does not open (not running, or refusing this user) or
    ///   lacks XDamage, or when the window is not there or not shown.
    public init(displayName: String?, window: UInt? = nil) throws(MirrorError) {
        let name = displayName ?? getenv("DISPLAY").map { String(cString: $0) }
        guard let name, !name.isEmpty else {
            // A Wayland desktop's screen is reached through xdg-desktop-portal's ScreenCast and PipeWire, not built
            // yet (docs/user-guide.md, "Showing your screen"); its Xwayland display shows X11 windows only.
            if let wayland = getenv("WAYLAND_DISPLAY"), wayland.pointee != 0 {
                throw MirrorError(
                    "this is a Wayland session without an X11 display: cast mirror captures X11 only (a Wayland "
                        + "screen needs xdg-desktop-portal's ScreenCast, not supported yet); give --display :N for "
                        + "an X11 display", usage: true)
            }
            throw MirrorError("no X11 display to mirror: set DISPLAY or give --display :N", usage: true)
        }
        cast_x11_count_errors()
        guard let display = XOpenDisplay(name) else { throw Self.notOpened(name) }
        var eventBase: Int32 = 0
        var errorBase: Int32 = 0
        guard XDamageQueryExtension(display, &eventBase, &errorBase) != 0 else {
            XCloseDisplay(display)
            throw MirrorError("the X11 display \(name) has no DAMAGE extension", usage: true)
        }
        guard cast_x11_default_depth(display) >= 24 else {
            XCloseDisplay(display)
            throw MirrorError("the X11 display \(name) is not 24-bit colour in 32-bit pixels", usage: true)
        }
        self.display = display
        root = cast_x11_default_root(display)
        self.window = window.map { Window($0) }
        damageEvent = eventBase + XDamageNotify
        // Structure events of the root (the screen's size) and of the window (its size, place and end), selected
        // before the geometry is read so that no change between the two is missed.
        XSelectInput(display, root, StructureNotifyMask)
        if let window = self.window { XSelectInput(display, window, StructureNotifyMask) }
        guard let rectangle = Self.rectangle(display, root: root, window: self.window) else {
            XCloseDisplay(display)
            throw MirrorError(
                "no window \(String(window ?? 0, radix: 16).prefixed) shown on the X11 display \(name) "
                    + "(xwininfo shows the ids)", usage: true)
        }
        (width, height) = (rectangle.width, rectangle.height)
        guard cast_x11_default_bits_per_pixel(display) == 32 else {
            XCloseDisplay(display)
            throw MirrorError("the X11 display \(name) is not 24-bit colour in 32-bit pixels", usage: true)
        }
        shared = XShmQueryExtension(display) != 0 ? Self.sharedImage(display, width: width, height: height) : nil
        damage = XDamageCreate(display, root, Int32(XDamageReportNonEmpty))
        origin = (rectangle.x, rectangle.y)
    }

    deinit {
        XDamageDestroy(display, damage)
        if let shared { Self.free(display, shared) }
        XCloseDisplay(display)
    }

    /// Why `name` did not open, for people: no X server there, or one that refused this user (Xlib's own words about
    /// it go to standard error, which `cast` does not show).
    private static func notOpened(_ name: String) -> MirrorError {
        switch cast_x11_server_listens(name) {
        case 1:
            MirrorError(
                "the X11 display \(name) refused the connection: this user may not capture it (no cookie for it, or a "
                    + "wrong one). Set XAUTHORITY to the X server's authority file (the desktop session's, such as "
                    + "~/.Xauthority of the user logged in there), or let this user in from the desktop with "
                    + "`xhost +si:localuser:$USER`", usage: true)
        case 0:
            MirrorError("cannot open the X11 display \(name): no X server listens there (is it running?)", usage: true)
        default:
            MirrorError(
                "cannot open the X11 display \(name) (is it running, and may this user open it? XAUTHORITY and "
                    + "`xhost` decide)", usage: true)
        }
    }

    /// An image of `width`×`height` pixels in memory shared with the X server; nil when the memory cannot be shared
    /// (the X server refuses to attach it: another IPC namespace, or a server on another host), so that the capture
    /// goes through `XGetImage`.
    private static func sharedImage(_ display: OpaquePointer, width: Int, height: Int) -> (
        image: UnsafeMutablePointer<XImage>, segment: UnsafeMutablePointer<XShmSegmentInfo>
    )? {
        let segment = UnsafeMutablePointer<XShmSegmentInfo>.allocate(capacity: 1)
        segment.initialize(to: XShmSegmentInfo())
        guard
            let image = XShmCreateImage(
                display, cast_x11_default_visual(display), UInt32(cast_x11_default_depth(display)), ZPixmap, nil,
                segment, UInt32(width), UInt32(height))
        else {
            segment.deallocate()
            return nil
        }
        let bytes = Int(cast_x11_image_stride(image)) * height
        segment.pointee.shmid = shmget(IPC_PRIVATE, bytes, IPC_CREAT | 0o600)
        guard segment.pointee.shmid >= 0, let memory = shmat(segment.pointee.shmid, nil, 0),
            memory != UnsafeMutableRawPointer(bitPattern: -1)
        else {
            if segment.pointee.shmid >= 0 { shmctl(segment.pointee.shmid, IPC_RMID, nil) }
            cast_x11_destroy_image(image)
            segment.deallocate()
            return nil
        }
        segment.pointee.shmaddr = memory.assumingMemoryBound(to: CChar.self)
        image.pointee.data = segment.pointee.shmaddr
        segment.pointee.readOnly = 0
        // The attach fails asynchronously (BadAccess, counted by the error handler): the round trip of XSync says.
        let errors = cast_x11_error_count()
        let attached = XShmAttach(display, segment) != 0
        XSync(display, 0)
        // Marked for removal now: it goes once both this process and the server let go, however this one ends.
        shmctl(segment.pointee.shmid, IPC_RMID, nil)
        guard attached, cast_x11_error_count() == errors else {
            image.pointee.data = nil
            cast_x11_destroy_image(image)
            shmdt(segment.pointee.shmaddr)
            segment.deallocate()
            return nil
        }
        return (image, segment)
    }

    private static func free(
        _ display: OpaquePointer,
        _ shared: (image: UnsafeMutablePointer<XImage>, segment: UnsafeMutablePointer<XShmSegmentInfo>)
    ) {
        XShmDetach(display, shared.segment)
        shared.image.pointee.data = nil
        cast_x11_destroy_image(shared.image)
        shmdt(shared.segment.pointee.shmaddr)
        shared.segment.deallocate()
    }

    /// The rectangle of the screen to capture: the whole screen, or the window's place on it clipped to the screen
    /// (at least 2×2: a window pushed off the screen shows a sliver of its edge). Nil when the window is gone or not
    /// shown (a request about a destroyed window fails: the error handler counts it).
    private static func rectangle(_ display: OpaquePointer, root: Window, window: Window?) -> (
        x: Int, y: Int, width: Int, height: Int
    )? {
        var screen = XWindowAttributes()
        guard XGetWindowAttributes(display, root, &screen) != 0 else { return nil }
        guard let window else { return (0, 0, Int(screen.width), Int(screen.height)) }
        var attributes = XWindowAttributes()
        let errors = cast_x11_error_count()
        guard XGetWindowAttributes(display, window, &attributes) != 0, attributes.map_state == IsViewable else {
            return nil
        }
        var x: Int32 = 0
        var y: Int32 = 0
        var child: Window = 0
        guard XTranslateCoordinates(display, window, root, 0, 0, &x, &y, &child) != 0,
            cast_x11_error_count() == errors
        else { return nil }
        let left = min(max(Int(x), 0), Int(screen.width) - 2)
        let top = min(max(Int(y), 0), Int(screen.height) - 2)
        let right = max(min(Int(x) + Int(attributes.width), Int(screen.width)), left + 2)
        let bottom = max(min(Int(y) + Int(attributes.height), Int(screen.height)), top + 2)
        return (left, top, right - left, bottom - top)
    }

    /// Whether the screen changed since the last capture (XDamage's reports, read without waiting). Reads the
    /// structure events too: a move or a new size is taken by `followGeometry`, the window's end sets `isClosed`.
    public func changed() -> Bool {
        var event = XEvent()
        while XPending(display) > 0 {
            XNextEvent(display, &event)
            switch cast_x11_event_type(&event) {
            case damageEvent: dirty = true
            case ConfigureNotify:
                moved = true
                dirty = true
            case DestroyNotify, UnmapNotify:
                if let window, cast_x11_event_window(&event) == window { isClosed = true }
            default: break
            }
        }
        return dirty || isClosed
    }

    /// Waits until the screen changes or `milliseconds` pass, whichever is first; whether it changed. The X
    /// connection's socket is polled, so a change is seen as soon as the server reports it.
    public func waitForChange(milliseconds: Int) -> Bool {
        if changed() { return true }
        guard milliseconds > 0 else { return false }
        var descriptor = pollfd(fd: XConnectionNumber(display), events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, Int32(milliseconds))
        return changed()
    }

    /// Reads the rectangle again after the window moved or changed size or the screen's resolution changed; whether
    /// its size changed (the image then has the new size: an encoder of the old one must be opened again). Sets
    /// `isClosed` when the window is gone. When no image of the new size can be shared with the X server, the capture
    /// goes on through `XGetImage`.
    public func followGeometry() -> Bool {
        guard moved, !isClosed else { return false }
        moved = false
        guard let rectangle = Self.rectangle(display, root: root, window: window) else {
            isClosed = window != nil
            return false
        }
        origin = (rectangle.x, rectangle.y)
        guard rectangle.width != width || rectangle.height != height else { return false }
        if let shared {
            Self.free(display, shared)
            self.shared = Self.sharedImage(display, width: rectangle.width, height: rectangle.height)
        }
        (width, height) = (rectangle.width, rectangle.height)
        return true
    }

    /// Captures the rectangle into the shared image and hands its pixels (BGRX, `stride` bytes a row) to `body`.
    /// - Throws: `MirrorError` when the server refuses (the screen changed size under the rectangle, the window went:
    ///   `followGeometry` and `isClosed` say which once its events arrive).
    public func capture<T>(_ body: (UnsafeRawPointer, _ stride: Int) throws -> T) throws -> T {
        // Subtracted before the pixels are read: a change during the read is reported again, never lost.
        XDamageSubtract(display, damage, 0, 0)
        dirty = false
        func refused() -> MirrorError {
            moved = true
            return MirrorError("the X server did not return the screen (did its size change?)", refusedCapture: true)
        }
        guard let shared else {
            // Through the socket: a new image each time (Xlib allocates it), its pixels handed on, then freed.
            guard
                let image = XGetImage(
                    display, root, Int32(origin.x), Int32(origin.y), UInt32(width), UInt32(height),
                    cast_x11_all_planes(), ZPixmap)
            else { throw refused() }
            defer { cast_x11_destroy_image(image) }
            guard cast_x11_image_bpp(image) == 32 else { throw MirrorError("the X11 display's pixels are not 32-bit") }
            return try body(UnsafeRawPointer(cast_x11_image_data(image)), Int(cast_x11_image_stride(image)))
        }
        guard XShmGetImage(display, root, shared.image, Int32(origin.x), Int32(origin.y), cast_x11_all_planes()) != 0
        else { throw refused() }
        return try body(UnsafeRawPointer(cast_x11_image_data(shared.image)), Int(cast_x11_image_stride(shared.image)))
    }

    /// The window's id as `xwininfo` writes it.
    public static func windowName(_ window: UInt) -> String { String(window, radix: 16).prefixed }
}

extension String {
    fileprivate var prefixed: String { "0x" + self }
}
