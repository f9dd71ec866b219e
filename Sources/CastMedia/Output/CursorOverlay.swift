internal import CSDL2
import CastProtocol

/// The mirrored sender's pointer, drawn over the picture (`MirrorCursor`): its shape as a texture with alpha, its hot
/// spot at the place the sender says, scaled with the picture. Created, used and destroyed on the SDL thread only.
final class CursorOverlay {
    private var texture: OpaquePointer?
    /// The shape's number whose texture this is (`WindowOutput.Requests.cursorShape`).
    private var shapeNumber = -1
    private var shape: MirrorCursor.Shape?
    private var place: (x: Int, y: Int)?

    /// Takes the pointer to draw (nil: none) and the number of its shape; a new number makes a new texture when the
    /// next `draw` needs it.
    func set(_ cursor: MirrorCursor?, shapeNumber: Int) -> Bool {
        let before = (place?.x, place?.y, self.shapeNumber)
        place = cursor.map { (Int($0.x), Int($0.y)) }
        if shapeNumber != self.shapeNumber {
            self.shapeNumber = shapeNumber
            shape = cursor?.shape
            if let texture { SDL_DestroyTexture(texture) }
            texture = nil
        }
        return before != (place?.x, place?.y, self.shapeNumber)
    }

    /// Draws the pointer when its hot spot is over the picture: `source` is the part of the picture shown at
    /// `destination` (the scaling mode's layout).
    func draw(_ renderer: OpaquePointer, source: PixelRect, destination: PixelRect) {
        guard let place, let shape, source.width > 0, source.height > 0,
            (source.x..<source.x + source.width).contains(place.x),
            (source.y..<source.y + source.height).contains(place.y)
        else { return }
        if texture == nil {
            texture = SDL_CreateTexture(
                renderer, SDL_PIXELFORMAT_ABGR8888.rawValue, Int32(SDL_TEXTUREACCESS_STATIC.rawValue),
                Int32(shape.width), Int32(shape.height))
            guard let texture else { return }
            SDL_SetTextureBlendMode(texture, SDL_BLENDMODE_BLEND)
            // ABGR8888 is R, G, B, A in memory on a little-endian machine: the wire's order.
            _ = shape.pixels.withUnsafeBytes { SDL_UpdateTexture(texture, nil, $0.baseAddress, Int32(shape.width * 4)) }
        }
        let scaleX = Double(destination.width) / Double(source.width)
        let scaleY = Double(destination.height) / Double(source.height)
        var target = SDL_Rect(
            x: Int32((Double(destination.x) + Double(place.x - shape.hotX - source.x) * scaleX).rounded()),
            y: Int32((Double(destination.y) + Double(place.y - shape.hotY - source.y) * scaleY).rounded()),
            w: Int32(max(1, (Double(shape.width) * scaleX).rounded())),
            h: Int32(max(1, (Double(shape.height) * scaleY).rounded())))
        var clip = SDL_Rect(destination)
        SDL_RenderSetClipRect(renderer, &clip)
        SDL_RenderCopy(renderer, texture, nil, &target)
        SDL_RenderSetClipRect(renderer, nil)
    }

    /// Frees the texture (the renderer is going away).
    func destroy() {
        if let texture { SDL_DestroyTexture(texture) }
        texture = nil
        shapeNumber = -1
    }
}
