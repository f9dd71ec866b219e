import CastTestSupport
import Foundation
import XCTest

extension VirtualDisplay {
    /// The whole screen now, as RGB, without the pointer (with it, as XFixes shows it, when `pointer`); saved as PNG
    /// to `save` when given (for a person to look at).
    func capture(save: String? = nil, pointer: Bool = false) throws -> Screenshot {
        let data = try rgbBytes(pointer: pointer)
        if let save {
            _ = try runCommand(
                [
                    "ffmpeg", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-video_size", "1280x720",
                    "-i",
                    "-", "-frames:v", "1", save,
                ], input: data)
        }
        return Screenshot(bytes: [UInt8](data), width: 1280, height: 720)
    }

    /// Moves the pointer to (`x`, `y`) as a mouse would (XWarpPointer: the window under it gets motion events).
    func movePointer(to x: Int, _ y: Int) throws {
        let script = """
            import ctypes, sys
            x11 = ctypes.CDLL("libX11.so.6")
            x11.XOpenDisplay.restype = ctypes.c_void_p
            x11.XDefaultRootWindow.restype = ctypes.c_ulong
            x11.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
            x11.XWarpPointer.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong] + [ctypes.c_int] * 2 \\
                + [ctypes.c_uint] * 2 + [ctypes.c_int] * 2
            x11.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
            x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
            display = x11.XOpenDisplay(sys.argv[1].encode())
            if not display:
                sys.exit("cannot open display " + sys.argv[1])
            x11.XWarpPointer(display, 0, x11.XDefaultRootWindow(display), 0, 0, 0, 0, int(sys.argv[2]), int(sys.argv[3]))
            x11.XSync(display, 0)
            x11.XCloseDisplay(display)
            """
        let result = try runCommand(["python3", "-c", script, self.display, String(x), String(y)], timeout: 20)
        guard result.status == 0 else { throw Media.MediaError(message: "cannot move the pointer: \(result.stderr)") }
    }
}
