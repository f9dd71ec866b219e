internal import CX11
import CastBase
public import CastProtocol
import Glibc
import Synchronization

/// The mouse pointer of an X11 display, as XFixes shows it (its shape and where its hot spot is), for `cast mirror`
/// to send beside the pictures: the receiver draws it over them, so a pointer that moves costs no picture.
///
/// It runs on a thread of its own with a display connection of its own (Xlib must have been told of threads:
/// `MirrorHelper.useThreads`), looks `MirrorCursor.maximumRate` times a second (one round trip each) and sends a
/// unit only when the pointer moved or changed shape, its place in the picture's pixels (`origin`: where the picture
/// starts on the screen, which the capture updates when the window mirrored moves).
///
/// Thread-safety: the tracker lives on its thread only; `Origin` is a mutex.
public final class CursorTracker {
    private let display: OpaquePointer
    private var lastSerial: UInt?
    private var lastPlace: (Int32, Int32)?

    /// Where the captured picture starts on the screen, shared between the capture and the cursor's thread.
    public final class Origin: Sendable {
        private let place = Mutex((x: 0, y: 0))
        /// A picture starting at the screen's top-left corner.
        public init() {}
        /// Where the picture starts now.
        public var value: (x: Int, y: Int) {
            get { place.withLock { $0 } }
            set { place.withLock { $0 = newValue } }
        }
    }

    private init(display: OpaquePointer) { self.display = display }

    deinit { XCloseDisplay(display) }

    /// Starts following the pointer of `displayName` (nil: `$DISPLAY`) on a thread of its own; each change goes to
    /// `send`, which says whether to go on (false: the stream ended). Returns why it cannot (no display, no XFixes):
    /// mirroring goes on without the pointer then.
    public static func start(
        displayName: String?, origin: Origin, send: @escaping @Sendable (MirrorCursor) -> Bool
    ) -> String? {
        let name = displayName ?? getenv("DISPLAY").map { String(cString: $0) } ?? ""
        guard let display = XOpenDisplay(name) else { return "cannot open the X11 display \(name) for the pointer" }
        var eventBase: Int32 = 0
        var errorBase: Int32 = 0
        guard XFixesQueryExtension(display, &eventBase, &errorBase) != 0 else {
            XCloseDisplay(display)
            return "the X11 display \(name) has no XFIXES extension: the pointer is not shown"
        }
        let tracker = CursorTracker(display: display)
        // `tracker` goes to the thread (`sending`): nothing here touches it again.
        startDetachedThread(name: "cast-mirror cursor") {
            let interval = timespec(tv_sec: 0, tv_nsec: 1_000_000_000 / MirrorCursor.maximumRate)
            while true {
                if let cursor = tracker.look(origin: origin.value), !send(cursor) { return }
                var pause = interval
                nanosleep(&pause, nil)
            }
        }
        return nil
    }

    /// The pointer now, when it moved or changed shape since the last look; nil otherwise.
    private func look(origin: (x: Int, y: Int)) -> MirrorCursor? {
        guard let image = XFixesGetCursorImage(display) else { return nil }
        defer { XFree(image) }
        let cursor = image.pointee
        let place = (Int32(cursor.x) - Int32(origin.x), Int32(cursor.y) - Int32(origin.y))
        let serial = UInt(cursor.cursor_serial)
        guard serial != lastSerial || lastPlace.map({ $0 != place }) ?? true else { return nil }
        var shape: MirrorCursor.Shape?
        if serial != lastSerial {
            let (width, height) = (Int(cursor.width), Int(cursor.height))
            var pixels = [UInt8](repeating: 0, count: width * height * 4)
            if let source = cursor.pixels, width * height > 0 {
                for index in 0..<width * height {
                    // XFixes: one ARGB pixel in each `unsigned long`, premultiplied; the wire has straight alpha.
                    let argb = UInt32(truncatingIfNeeded: source[index])
                    let alpha = Int(argb >> 24)
                    let straight = { (value: UInt32) -> UInt8 in
                        alpha == 0 ? 0 : UInt8(min(255, Int(value & 0xFF) * 255 / alpha))
                    }
                    pixels[index * 4] = straight(argb >> 16)
                    pixels[index * 4 + 1] = straight(argb >> 8)
                    pixels[index * 4 + 2] = straight(argb)
                    pixels[index * 4 + 3] = UInt8(alpha)
                }
            }
            // Nil for a shape too large to send: the receiver keeps the last one.
            shape = MirrorCursor.Shape(
                width: width, height: height, hotX: Int(cursor.xhot), hotY: Int(cursor.yhot), pixels: pixels)
        }
        lastSerial = serial
        lastPlace = place
        return MirrorCursor(x: place.0, y: place.1, shape: shape)
    }
}
