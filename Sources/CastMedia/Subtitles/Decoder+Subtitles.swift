internal import CFFmpeg
import Foundation

extension Decoder {
    /// The most a bitmap subtitle picture may measure (either side) and the most rectangles one event may have: DVD
    /// and Blu-ray pictures are at most 1920 wide, one event holds a few. Hostile streams claiming more are skipped.
    static let subtitlePictureSide = 4096
    static let subtitleRectangles = 64
    /// The longest ASS line kept: a real dialogue line is a few hundred bytes; karaoke and drawing effects a few KB.
    static let subtitleLineBytes = 64 << 10

    /// The codec's ASS header (styles, PlayResX/Y): what libass needs before any of the stream's events.
    var subtitleHeader: String? {
        let c = context.pointee
        guard let header = c.subtitle_header, c.subtitle_header_size > 0, c.subtitle_header_size < 1 << 20 else {
            return nil
        }
        let bytes = UnsafeBufferPointer(start: header, count: Int(c.subtitle_header_size))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Decodes one subtitle packet (avcodec_decode_subtitle2). `startOffset` (ms) is subtracted from its time (the
    /// container's start, as for the frames). Returns nil when the packet yields nothing; a packet FFmpeg refuses, or
    /// one whose pictures break the bounds above, is skipped (counted), never drawn half.
    func decodeSubtitle(_ packet: Packet, startOffset: Int64) -> SubtitleEvent? {
        var subtitle = AVSubtitle()
        var got: Int32 = 0
        let status = avcodec_decode_subtitle2(context, &subtitle, &got, packet.pointer)
        guard status >= 0 else {
            skippedPackets += 1
            return nil
        }
        guard got != 0 else { return nil }
        defer { avsubtitle_free(&subtitle) }
        decodedFrames += 1
        let p = packet.pointer.pointee
        let pts: Int64
        if subtitle.pts != cast_av_nopts_value() {
            pts = subtitle.pts / 1000
        } else if p.pts != cast_av_nopts_value() {
            pts = av_rescale_q(p.pts, timeBase, AVRational(num: 1, den: 1000))
        } else {
            return nil
        }
        let start = pts + Int64(subtitle.start_display_time) - startOffset
        let count = Int(subtitle.num_rects)
        guard count <= Self.subtitleRectangles else {
            skippedPackets += 1
            return nil
        }
        var lines: [String] = []
        var pictures: [SubtitlePicture] = []
        for i in 0..<count {
            guard let rect = subtitle.rects[i]?.pointee else { continue }
            switch rect.type {
            case SUBTITLE_ASS:
                guard let ass = rect.ass else { continue }
                let line = String(cString: ass)
                if line.utf8.count <= Self.subtitleLineBytes { lines.append(line) }
            case SUBTITLE_BITMAP:
                guard let picture = Self.picture(of: rect) else {
                    skippedPackets += 1
                    return nil
                }
                pictures.append(picture)
            default: continue
            }
        }
        let end = subtitle.end_display_time
        if !lines.isEmpty {
            // No end (0 or UINT32_MAX): shown until the next line, at most a few seconds, as players do.
            let duration = end == 0 || end == UInt32.max ? 5000 : Int64(end) - Int64(subtitle.start_display_time)
            return .text(lines: lines, start: start, duration: max(duration, 0))
        }
        let known = end != 0 && end != UInt32.max && end > subtitle.start_display_time
        let canvas = (width: Int(context.pointee.width), height: Int(context.pointee.height))
        return .pictures(
            pictures, start: start, end: known ? pts + Int64(end) - startOffset : nil, canvas: canvas)
    }

    /// A bitmap rectangle copied out of FFmpeg's buffers, or nil when it breaks the bounds.
    private static func picture(of rect: AVSubtitleRect) -> SubtitlePicture? {
        let (w, h) = (Int(rect.w), Int(rect.h))
        let colours = Int(rect.nb_colors)
        let stride = Int(rect.linesize.0)
        guard w > 0, h > 0, w <= subtitlePictureSide, h <= subtitlePictureSide, (1...256).contains(colours),
            stride >= w, rect.x >= 0, rect.y >= 0, let pixels = rect.data.0, let palette = rect.data.1
        else { return nil }
        var indices = [UInt8](repeating: 0, count: w * h)
        for row in 0..<h {
            for column in 0..<w { indices[row * w + column] = pixels[row * stride + column] }
        }
        let entries = UnsafeRawPointer(palette).bindMemory(to: UInt32.self, capacity: colours)
        var colourTable = (0..<colours).map { entries[$0] }
        // An index past the palette is drawn transparent rather than read out of bounds.
        colourTable += [UInt32](repeating: 0, count: 256 - colours)
        return SubtitlePicture(
            x: Int(rect.x), y: Int(rect.y), width: w, height: h, indices: indices, palette: colourTable)
    }
}
