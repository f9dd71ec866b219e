internal import CX11
import Glibc

/// An X11 display's root window, captured through MIT-SHM (`XShmGetImage`: the server writes the pixels straight into
/// shared memory, no copy through the socket), with XDamage telling whether anything changed since the last capture:
/// an idle desktop costs one round trip per frame and no encoding.
///
/// Thread-safety: one thread uses it (Xlib is not initialised for threads here).
public final class ScreenCapture {
    private let display: OpaquePointer
    private let root: Window
    private var image: UnsafeMutablePointer<XImage>
    private var segment = XShmSegmentInfo()
    private let damage: Damage
    private let damageEvent: Int32
    /// The screen's size in pixels.
    public let width: Int
    /// The screen's size in pixels.
    public let height: Int
    /// Whether the next capture needs the pixels (the first does, then what XDamage reports).
    private var dirty = true

    /// Opens `displayName` (nil: `$DISPLAY`).
    /// - Throws: `MirrorError` with `isUsage` when the display does not open or lacks MIT-SHM or XDamage.
    public init(displayName: String?) throws(MirrorError) {
        let name = displayName ?? getenv("DISPLAY").map { String(cString: $0) }
        guard let name, !name.isEmpty else {
            throw MirrorError("no X11 display to mirror: set DISPLAY or give --display :N", usage: true)
        }
        guard let display = XOpenDisplay(name) else {
            throw MirrorError(
                "cannot open the X11 display \(name) (is it running, and may this user open it?)", usage: true)
        }
        guard XShmQueryExtension(display) != 0 else {
            XCloseDisplay(display)
            throw MirrorError(
                "the X11 display \(name) has no MIT-SHM extension (a remote display cannot be mirrored)", usage: true)
        }
        var eventBase: Int32 = 0
        var errorBase: Int32 = 0
        guard XDamageQueryExtension(display, &eventBase, &errorBase) != 0 else {
            XCloseDisplay(display)
            throw MirrorError("the X11 display \(name) has no DAMAGE extension", usage: true)
        }
        self.display = display
        root = cast_x11_default_root(display)
        var attributes = XWindowAttributes()
        XGetWindowAttributes(display, root, &attributes)
        width = Int(attributes.width)
        height = Int(attributes.height)
        damageEvent = eventBase + XDamageNotify
        guard cast_x11_default_depth(display) >= 24,
            let image = XShmCreateImage(
                display, cast_x11_default_visual(display), UInt32(cast_x11_default_depth(display)), ZPixmap, nil,
                &segment, UInt32(width), UInt32(height)),
            cast_x11_image_bpp(image) == 32
        else {
            XCloseDisplay(display)
            throw MirrorError("the X11 display \(name) is not 24-bit colour in 32-bit pixels", usage: true)
        }
        self.image = image
        let bytes = Int(cast_x11_image_stride(image)) * height
        segment.shmid = shmget(IPC_PRIVATE, bytes, IPC_CREAT | 0o600)
        guard segment.shmid >= 0, let memory = shmat(segment.shmid, nil, 0),
            memory != UnsafeMutableRawPointer(bitPattern: -1)
        else {
            cast_x11_destroy_image(image)
            XCloseDisplay(display)
            throw MirrorError("cannot share memory with the X server: \(String(cString: strerror(errno)))")
        }
        segment.shmaddr = memory.assumingMemoryBound(to: CChar.self)
        image.pointee.data = segment.shmaddr
        segment.readOnly = 0
        XShmAttach(display, &segment)
        XSync(display, 0)
        // Marked for removal now: it goes once both this process and the server let go, however this one ends.
        shmctl(segment.shmid, IPC_RMID, nil)
        damage = XDamageCreate(display, root, Int32(XDamageReportNonEmpty))
    }

    deinit {
        XDamageDestroy(display, damage)
        XShmDetach(display, &segment)
        image.pointee.data = nil
        cast_x11_destroy_image(image)
        shmdt(segment.shmaddr)
        XCloseDisplay(display)
    }

    /// Whether the screen changed since the last capture (XDamage's reports, read without waiting).
    public func changed() -> Bool {
        var event = XEvent()
        while XPending(display) > 0 {
            XNextEvent(display, &event)
            if cast_x11_event_type(&event) == damageEvent { dirty = true }
        }
        return dirty
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

    /// Captures the screen into the shared image and hands its pixels (BGRX, `stride` bytes a row) to `body`.
    /// - Throws: `MirrorError` when the server refuses (the screen changed size: the image no longer fits).
    public func capture<T>(_ body: (UnsafeRawPointer, _ stride: Int) throws -> T) throws -> T {
        // Subtracted before the pixels are read: a change during the read is reported again, never lost.
        XDamageSubtract(display, damage, 0, 0)
        dirty = false
        guard XShmGetImage(display, root, image, 0, 0, cast_x11_all_planes()) != 0 else {
            throw MirrorError("the X server did not return the screen (did its size change?)")
        }
        return try body(UnsafeRawPointer(cast_x11_image_data(image)), Int(cast_x11_image_stride(image)))
    }
}
