/// One decoded subtitle, in media time (milliseconds from the start, as the video frames' times): what a subtitle
/// decoder produced for one packet, before it is drawn.
enum SubtitleEvent: Sendable {
    /// Text as ASS dialogue lines (FFmpeg's decoders turn SRT, mov_text and WebVTT into ASS too), shown from `start`
    /// for
    /// `duration`; libass lays them out.
    case text(lines: [String], start: Int64, duration: Int64)
    /// Pictures (PGS, DVB, VobSub) shown from `start` until `end`, or until the next picture when `end` is nil (PGS and
    /// DVB end a picture with an empty one). `canvas` is the size the positions refer to (the subtitle stream's
    /// width and height); zero when the stream does not say, then the video's size.
    case pictures([SubtitlePicture], start: Int64, end: Int64?, canvas: (width: Int, height: Int))
}

/// One palette image of a bitmap subtitle: `indices` (width × height bytes, row after row) into `palette` (0xAARRGGBB).
struct SubtitlePicture: Sendable {
    var x: Int
    var y: Int
    var width: Int
    var height: Int
    var indices: [UInt8]
    var palette: [UInt32]
}
