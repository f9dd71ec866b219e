public import CastProtocol

/// How a picture is fitted into a screen whose shape differs from it (the seeds' `MPMovieScalingMode`): the wire's
/// `VideoScalingMode` itself, so that the engine, castd and CastKit speak of one type.
public typealias ScalingMode = VideoScalingMode

/// A rectangle in pixels.
struct PixelRect: Equatable, Sendable {
    var x: Int
    var y: Int
    var width: Int
    var height: Int
}

/// Where a picture lands on a screen: which part of the picture (`source`, in picture pixels) is drawn to which part
/// of the screen (`destination`, in screen pixels). Pure arithmetic, so the four modes are testable without a display.
struct VideoLayout: Equatable, Sendable {
    var source: PixelRect
    var destination: PixelRect

    /// The layout of a `pictureWidth`×`pictureHeight` picture shown at `displayWidth`×`displayHeight` (its size with
    /// square pixels, after the sample aspect ratio) on an `outputWidth`×`outputHeight` screen.
    init(
        mode: ScalingMode, pictureWidth: Int, pictureHeight: Int, displayWidth: Double, displayHeight: Double,
        outputWidth: Int, outputHeight: Int
    ) {
        let output = (width: Double(outputWidth), height: Double(outputHeight))
        let display = (width: max(displayWidth, 1), height: max(displayHeight, 1))
        // Screen pixels per display pixel, across and down.
        let scale: (x: Double, y: Double)
        switch mode {
        case .none: scale = (1, 1)
        case .fill: scale = (output.width / display.width, output.height / display.height)
        case .aspectFit:
            let s = min(output.width / display.width, output.height / display.height)
            scale = (s, s)
        case .aspectFill:
            let s = max(output.width / display.width, output.height / display.height)
            scale = (s, s)
        }
        // The picture's size on screen, and the part of it that the screen shows (centred, cropped at the edges).
        let shown = (width: display.width * scale.x, height: display.height * scale.y)
        let visible = (width: min(shown.width, output.width), height: min(shown.height, output.height))
        let fraction = (width: visible.width / shown.width, height: visible.height / shown.height)
        let sourceWidth = max(1, Int((Double(pictureWidth) * fraction.width).rounded()))
        let sourceHeight = max(1, Int((Double(pictureHeight) * fraction.height).rounded()))
        source = PixelRect(
            x: (pictureWidth - sourceWidth) / 2, y: (pictureHeight - sourceHeight) / 2,
            width: sourceWidth, height: sourceHeight)
        let width = max(1, Int(visible.width.rounded()))
        let height = max(1, Int(visible.height.rounded()))
        destination = PixelRect(
            x: (outputWidth - width) / 2, y: (outputHeight - height) / 2, width: width, height: height)
    }
}
