internal import CFFmpeg

/// Draws subtitle images into a decoded picture's planes, in place. 8-bit planar YUV only (yuv420p, yuv422p,
/// yuv444p and their full-range twins): what nearly every film decodes to; other formats are left as they are.
///
/// The arithmetic is the one FFmpeg's `subtitles` filter draws with, so that a picture with text burnt in matches
/// `ffmpeg -vf subtitles=…` bit for bit: the colour in the picture's own matrix and range, an 8.24 fixed-point
/// opacity, and a chroma sample covered by the mean of the mask under it.
struct SubtitleCanvas {
    private let planes: [(base: UnsafeMutablePointer<UInt8>, stride: Int, xShift: Int, yShift: Int)]
    let width: Int
    let height: Int
    /// The colour matrix's red and blue weights.
    private let luma: (red: Double, blue: Double)
    private let fullRange: Bool

    /// The canvas over `frame`'s planes, or nil when its pixel format is not 8-bit planar YUV.
    init?(frame: UnsafeMutablePointer<AVFrame>) {
        guard let descriptor = av_pix_fmt_desc_get(AVPixelFormat(rawValue: frame.pointee.format))?.pointee,
            Self.isPlanarYUV8(descriptor)
        else { return nil }
        let f = frame.pointee
        guard let y = f.data.0, let u = f.data.1, let v = f.data.2 else { return nil }
        let (xs, ys) = (Int(descriptor.log2_chroma_w), Int(descriptor.log2_chroma_h))
        planes = [
            (y, Int(f.linesize.0), 0, 0), (u, Int(f.linesize.1), xs, ys), (v, Int(f.linesize.2), xs, ys),
        ]
        width = Int(f.width)
        height = Int(f.height)
        switch f.colorspace {
        case AVCOL_SPC_BT709: luma = (0.2126, 0.0722)
        case AVCOL_SPC_BT2020_NCL, AVCOL_SPC_BT2020_CL: luma = (0.2627, 0.0593)
        case AVCOL_SPC_SMPTE240M: luma = (0.212, 0.087)
        case AVCOL_SPC_FCC: luma = (0.30, 0.11)
        default: luma = (0.299, 0.114)
        }
        let format = AVPixelFormat(rawValue: f.format)
        fullRange =
            f.color_range == AVCOL_RANGE_JPEG
            || (f.color_range == AVCOL_RANGE_UNSPECIFIED
                && Self.fullRangeFormats.contains(format))
    }

    /// The formats that are full range by name (JPEG's), whatever the frame says.
    private static let fullRangeFormats = [
        AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUVJ444P, AV_PIX_FMT_YUVJ440P,
    ]

    static func isPlanarYUV8(_ d: AVPixFmtDescriptor) -> Bool {
        guard d.flags & UInt64(AV_PIX_FMT_FLAG_PLANAR) != 0, d.flags & UInt64(AV_PIX_FMT_FLAG_RGB) == 0,
            d.flags & UInt64(AV_PIX_FMT_FLAG_PAL) == 0, d.nb_components >= 3
        else { return false }
        let components = [d.comp.0, d.comp.1, d.comp.2]
        return components.enumerated().allSatisfy { $1.depth == 8 && $1.step == 1 && Int($1.plane) == $0 }
    }

    /// Blends a one-colour alpha mask (libass's image) at (x, y): `colour` is 0xRRGGBBTT, TT its transparency.
    func blend(
        mask: UnsafePointer<UInt8>, stride: Int, width w: Int, height h: Int, x: Int, y: Int, colour: UInt32
    ) {
        let opacity = Int(255 - colour & 0xFF)
        guard opacity > 0 else { return }
        let (r, g, b) = (Int(colour >> 24), Int(colour >> 16 & 0xFF), Int(colour >> 8 & 0xFF))
        let yuv = self.yuv(r: r, g: g, b: b)
        let alpha = (0x10307 * opacity + 3) >> 8
        // The mask clipped to the picture.
        let x0 = max(x, 0)
        let y0 = max(y, 0)
        let x1 = min(x + w, width)
        let y1 = min(y + h, height)
        guard x0 < x1, y0 < y1 else { return }
        for (index, plane) in planes.enumerated() {
            let value = [yuv.y, yuv.u, yuv.v][index]
            let (xs, ys) = (plane.xShift, plane.yShift)
            for py in (y0 >> ys)...((y1 - 1) >> ys) {
                let my0 = max(py << ys, y0)
                let my1 = min((py + 1) << ys, y1)
                let row = plane.base + py * plane.stride
                for px in (x0 >> xs)...((x1 - 1) >> xs) {
                    let mx0 = max(px << xs, x0)
                    let mx1 = min((px + 1) << xs, x1)
                    var covered = 0
                    for my in my0..<my1 {
                        let line = mask + (my - y) * stride - x
                        for mx in mx0..<mx1 { covered += Int(line[mx]) }
                    }
                    guard covered > 0 else { continue }
                    let a = (covered >> (xs + ys)) * alpha
                    row[px] = UInt8(truncatingIfNeeded: ((0x1010101 - a) * Int(row[px]) + a * value) >> 24)
                }
            }
        }
    }

    /// Blends a palette picture placed at (x, y) and stretched by (xScale, yScale) from its canvas to the picture's:
    /// each palette colour is drawn as its own mask, so a colour's edge mixes with the video as text does.
    func blend(_ picture: SubtitlePicture, xScale: Double, yScale: Double) {
        let left = Int((Double(picture.x) * xScale).rounded(.down))
        let top = Int((Double(picture.y) * yScale).rounded(.down))
        let w = max(1, Int((Double(picture.width) * xScale).rounded()))
        let h = max(1, Int((Double(picture.height) * yScale).rounded()))
        // Nearest-neighbour scaling to the picture's size (none when the canvas is the video's size).
        var scaled = [UInt8](repeating: 0, count: w * h)
        for row in 0..<h {
            let source = min(picture.height - 1, Int(Double(row) / yScale)) * picture.width
            for column in 0..<w {
                scaled[row * w + column] =
                    picture.indices[source + min(picture.width - 1, Int(Double(column) / xScale))]
            }
        }
        var used = [Bool](repeating: false, count: 256)
        for index in scaled { used[Int(index)] = true }
        var mask = [UInt8](repeating: 0, count: w * h)
        for index in 0..<256 where used[index] {
            let argb = picture.palette[index]
            let a = argb >> 24
            guard a > 0 else { continue }
            for i in 0..<scaled.count { mask[i] = scaled[i] == index ? 255 : 0 }
            // As libass's colour: 0xRRGGBB then the transparency.
            let colour = (argb & 0xFF_FFFF) << 8 | (255 - a)
            mask.withUnsafeBufferPointer { m in
                blend(mask: m.baseAddress!, stride: w, width: w, height: h, x: left, y: top, colour: colour)
            }
        }
    }

    /// RGB to the picture's YUV: its matrix (BT.601 when unspecified, BT.709, BT.2020) and range (limited unless the
    /// frame or its format says full), rounded to nearest, as FFmpeg's drawing code converts a colour, so that the
    /// same colour gives the same bytes.
    func yuv(r: Int, g: Int, b: Int) -> (y: Int, u: Int, v: Int) {
        let (kr, kb) = luma
        let kg = 1 - kr - kb
        let (rf, gf, bf) = (Double(r) / 255, Double(g) / 255, Double(b) / 255)
        let y = kr * rf + kg * gf + kb * bf
        let u = -0.5 * kr / (1 - kb) * rf - 0.5 * kg / (1 - kb) * gf + 0.5 * bf
        let v = 0.5 * rf - 0.5 * kg / (1 - kr) * gf - 0.5 * kb / (1 - kr) * bf
        func byte(_ x: Double) -> Int { min(max(Int(x + 0.5), 0), 255) }
        return fullRange
            ? (byte(255 * y), byte(255 * u + 128), byte(255 * v + 128))
            : (byte(219 * y + 16), byte(224 * u + 128), byte(224 * v + 128))
    }
}
