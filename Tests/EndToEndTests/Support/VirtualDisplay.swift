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

/// An RGB24 screen capture.
struct Screenshot {
    let bytes: [UInt8]
    let width: Int
    let height: Int

    /// The colours a test clip and the idle screen use.
    enum Colour {
        case red, green, blue, black, white
        /// Within 16 of each component.
        case near(r: Int, g: Int, b: Int)

        func matches(_ p: (r: Int, g: Int, b: Int)) -> Bool {
            switch self {
            case .red: p.r > 200 && p.g < 60 && p.b < 60
            // lavfi's "green" is #008000.
            case .green: p.r < 50 && p.g > 90 && p.b < 50
            case .blue: p.r < 50 && p.g < 50 && p.b > 200
            case .black: p.r < 20 && p.g < 20 && p.b < 20
            case .white: p.r > 200 && p.g > 200 && p.b > 200
            case .near(let r, let g, let b): abs(p.r - r) <= 16 && abs(p.g - g) <= 16 && abs(p.b - b) <= 16
            }
        }
    }

    func pixel(_ x: Int, _ y: Int) -> (r: Int, g: Int, b: Int) {
        let i = (y * width + x) * 3
        return (Int(bytes[i]), Int(bytes[i + 1]), Int(bytes[i + 2]))
    }

    /// The share of pixels of `colour` in the rectangle, sampled every `step` pixels across and down.
    func fraction(of colour: Colour, x: Range<Int>, y: Range<Int>, step: Int = 4) -> Double {
        var hits = 0
        var total = 0
        for row in stride(from: y.lowerBound, to: y.upperBound, by: step) {
            for column in stride(from: x.lowerBound, to: x.upperBound, by: step) {
                total += 1
                if colour.matches(pixel(column, row)) { hits += 1 }
            }
        }
        return total == 0 ? 0 : Double(hits) / Double(total)
    }

    /// The columns (leftmost, rightmost) that hold a pixel brighter than the background in rows `y`; nil when none.
    func litColumns(y: Range<Int>) -> ClosedRange<Int>? {
        var first: Int?
        var last: Int?
        for row in y {
            for column in 0..<width {
                let p = pixel(column, row)
                if p.r + p.g + p.b > 3 * 100 {
                    first = min(first ?? column, column)
                    last = max(last ?? column, column)
                }
            }
        }
        guard let first, let last else { return nil }
        return first...last
    }
}
