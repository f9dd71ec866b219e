import XCTest

/// An RGB24 screen capture (of a `VirtualDisplay`, or a reference picture ffmpeg drew), one copy for every test target.
public struct Screenshot: Sendable {
    public let bytes: [UInt8]
    public let width: Int
    public let height: Int

    public init(bytes: [UInt8], width: Int, height: Int) {
        self.bytes = bytes
        self.width = width
        self.height = height
    }

    /// The colours a test clip and the idle screen use.
    public enum Colour: Sendable {
        case red, green, blue, black, white
        /// Within 16 of each component.
        case near(r: Int, g: Int, b: Int)

        public func matches(_ p: (r: Int, g: Int, b: Int)) -> Bool {
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

    /// The pixel at (`x`, `y`); (-1, -1, -1) outside the capture (a short one: the display went away mid-read).
    public func pixel(_ x: Int, _ y: Int) -> (r: Int, g: Int, b: Int) {
        let i = (y * width + x) * 3
        guard i >= 0, i + 2 < bytes.count else { return (-1, -1, -1) }
        return (Int(bytes[i]), Int(bytes[i + 1]), Int(bytes[i + 2]))
    }

    /// Fails the test unless the pixel at (`x`, `y`) is `colour`.
    public func assert(
        _ colour: Colour, at x: Int, _ y: Int, _ note: String = "", file: StaticString = #filePath, line: UInt = #line
    ) {
        let p = pixel(x, y)
        XCTAssertTrue(colour.matches(p), "(\(x), \(y)) is \(p), expected \(colour) \(note)", file: file, line: line)
    }

    /// The share of pixels of `colour` in the rectangle, sampled every `step` pixels across and down.
    public func fraction(of colour: Colour, x: Range<Int>, y: Range<Int>, step: Int = 4) -> Double {
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
    public func litColumns(y: Range<Int>) -> ClosedRange<Int>? {
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
