import Foundation

/// How a stream's pictures must be turned to stand upright: a phone stores them as the sensor saw them and says in a
/// display matrix (MP4's `tkhd` matrix, Matroska's projection, H.264's display orientation SEI) how to show them.
///
/// The rule is the ffmpeg tool's autorotate (fftools/ffmpeg_filter.c, FFmpeg 5.1), filter for filter, so that the
/// presented frames match `ffmpeg -i IN -f framemd5` bit for bit: a quarter turn is one `transpose` (with a flip
/// when the matrix mirrors), a half turn `hflip` and/or `vflip` as the matrix's diagonal says, a mirror alone
/// `vflip`, and any other angle the `rotate` filter.
struct VideoOrientation: Equatable, Sendable {
    /// The libavfilter chain that turns the pictures upright ("transpose=clock", "hflip,vflip"), empty when they
    /// already are.
    let filters: String
    /// The chain turns the picture a quarter: width and height trade places (the natural size is the turned one).
    let swapsWidthAndHeight: Bool

    /// Pictures shown as they are decoded.
    static let upright = VideoOrientation(filters: "", swapsWidthAndHeight: false)

    private init(filters: String, swapsWidthAndHeight: Bool) {
        self.filters = filters
        self.swapsWidthAndHeight = swapsWidthAndHeight
    }

    /// From a display matrix: nine 32-bit values, row-major, a b u / c d v / x y w (16.16 fixed point except u v w,
    /// which are 2.30), as FFmpeg's `AV_PKT_DATA_DISPLAYMATRIX` holds it. nil or too short: upright.
    init(displayMatrix matrix: [Int32]?) {
        guard let matrix, matrix.count >= 9 else {
            self = .upright
            return
        }
        let theta = Self.rotation(matrix)
        if abs(theta - 90) < 1 {
            self.init(
                filters: matrix[3] > 0 ? "transpose=cclock_flip" : "transpose=clock",
                swapsWidthAndHeight: true)
        } else if abs(theta - 180) < 1 {
            let flips = (matrix[0] < 0 ? ["hflip"] : []) + (matrix[4] < 0 ? ["vflip"] : [])
            self.init(filters: flips.joined(separator: ","), swapsWidthAndHeight: false)
        } else if abs(theta - 270) < 1 {
            self.init(
                filters: matrix[3] < 0 ? "transpose=clock_flip" : "transpose=cclock",
                swapsWidthAndHeight: true)
        } else if abs(theta) > 1 {
            // The rotate filter keeps the input's size; the corners outside the turned picture are black.
            self.init(filters: String(format: "rotate=%f*PI/180", theta), swapsWidthAndHeight: false)
        } else {
            self.init(filters: matrix[4] < 0 ? "vflip" : "", swapsWidthAndHeight: false)
        }
    }

    /// The clockwise angle in degrees, 0 ≤ θ < 360, that the picture must turn: fftools' `get_rotation`, which
    /// negates `av_display_rotation_get` (counter-clockwise) and rounds it to a whole degree.
    static func rotation(_ matrix: [Int32]) -> Double {
        // av_display_rotation_get: the angle of the scaled first two columns (16.16 fixed point).
        let scale0 = hypot(Double(matrix[0]), Double(matrix[3]))
        let scale1 = hypot(Double(matrix[1]), Double(matrix[4]))
        guard scale0 != 0, scale1 != 0 else { return 0 }
        let angle = atan2(Double(matrix[1]) / scale1, Double(matrix[0]) / scale0) * 180 / Double.pi
        // av_display_rotation_get returns -angle; get_rotation negates it again after rounding (half away from 0).
        var theta = -(-angle).rounded()
        theta -= 360 * (theta / 360 + 0.9 / 360).rounded(.down)
        return theta
    }
}
