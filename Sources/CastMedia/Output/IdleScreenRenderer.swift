internal import CSDL2
import Foundation

/// Draws an `IdleScreen` with SDL2_ttf: each line is rendered once into a texture and drawn again on every redraw
/// until its text or the screen's height changes. Created, used and destroyed on the SDL thread only (inside
/// `WindowRenderer`), so it needs no lock and is not Sendable.
///
/// Without a font file (see `fontCandidates`) the idle screen stays black and one message says so: text on the idle
/// screen must never keep the window or playback from working.
final class IdleScreenRenderer {
    /// Where the font is looked for, in order: `CAST_FONT` when set, then where Debian's fonts-dejavu-core and other
    /// distributions put DejaVu Sans.
    static var fontCandidates: [String] {
        var paths: [String] = []
        if let path = ProcessInfo.processInfo.environment["CAST_FONT"], !path.isEmpty { paths.append(path) }
        return paths + [
            "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/TTF/DejaVuSans.ttf",
            "/usr/share/fonts/dejavu/DejaVuSans.ttf", "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
        ]
    }

    /// A line drawn into a texture.
    private struct Line {
        var text: String
        var size: Int32
        var texture: OpaquePointer
        var width: Int32
        var height: Int32
    }

    private let renderer: OpaquePointer
    private var fontPath: String?
    private var fonts: [Int32: OpaquePointer] = [:]
    private var lines: [String: Line] = [:]
    private var complained = false
    /// Where a missing font is reported.
    var log = MediaLog.silent

    /// Starts SDL2_ttf for `renderer` (after SDL_Init, on the SDL thread).
    init(renderer: OpaquePointer) {
        self.renderer = renderer
        if TTF_Init() != 0 {
            complain("TTF_Init: \(sdlError())")
        } else {
            fontPath = Self.fontCandidates.first { FileManager.default.isReadableFile(atPath: $0) }
            if fontPath == nil { complain("no font found (looked for \(Self.fontCandidates.joined(separator: ", ")))") }
        }
    }

    /// Frees the textures and fonts and stops SDL2_ttf; before the renderer is destroyed.
    func destroy() {
        for line in lines.values { SDL_DestroyTexture(line.texture) }
        lines.removeAll()
        for font in fonts.values { TTF_CloseFont(font) }
        fonts.removeAll()
        if TTF_WasInit() != 0 { TTF_Quit() }
    }

    /// Draws `screen` onto an `width`×`height` output that was cleared to black.
    func draw(_ screen: IdleScreen, width: Int32, height: Int32) {
        var wanted: [(key: String, text: String, size: Double, row: Double)] = []
        if !screen.name.isEmpty { wanted.append(("name", screen.name, IdleScreen.nameSize, IdleScreen.nameRow)) }
        if let pinLine = screen.pinLine { wanted.append(("pin", pinLine, IdleScreen.pinSize, IdleScreen.pinRow)) }
        if let hint = screen.hintLine { wanted.append(("hint", hint, IdleScreen.hintSize, IdleScreen.hintRow)) }
        drawLines(wanted, width: width, height: height)
    }

    /// Draws lines of text, each centred across the output on the row at `row` of its height, `size` of the height
    /// tall (scaled down to fit the width). Textures of lines not drawn now are freed, but for the keys in `keeping`.
    func drawLines(
        _ wanted: [(key: String, text: String, size: Double, row: Double)], width: Int32, height: Int32,
        keeping: Set<String> = []
    ) {
        for key in lines.keys where !keeping.contains(key) && !wanted.contains(where: { $0.key == key }) { forget(key) }
        for item in wanted {
            guard let line = line(item.key, text: item.text, size: pixels(item.size, of: height)) else { continue }
            // Scaled down to the screen's width when a long name would not fit.
            let scale = min(1, Double(width) * 0.94 / Double(max(line.width, 1)))
            let w = Int32(Double(line.width) * scale)
            let h = Int32(Double(line.height) * scale)
            var destination = SDL_Rect(
                x: (width - w) / 2, y: Int32(Double(height) * item.row) - h / 2, w: w, h: h)
            SDL_RenderCopy(renderer, line.texture, nil, &destination)
        }
    }

    private func pixels(_ fraction: Double, of height: Int32) -> Int32 { max(8, Int32(Double(height) * fraction)) }

    /// The texture of `text` at `size`, made when it is not the one cached under `key`.
    private func line(_ key: String, text: String, size: Int32) -> Line? {
        if let line = lines[key], line.text == text, line.size == size { return line }
        forget(key)
        guard let font = font(size: size) else { return nil }
        let white = SDL_Color(r: 255, g: 255, b: 255, a: 255)
        guard let surface = TTF_RenderUTF8_Blended(font, text, white) else {
            complain("TTF_RenderUTF8_Blended: \(sdlError())")
            return nil
        }
        defer { SDL_FreeSurface(surface) }
        guard let texture = SDL_CreateTextureFromSurface(renderer, surface) else {
            complain("SDL_CreateTextureFromSurface: \(sdlError())")
            return nil
        }
        SDL_SetTextureBlendMode(texture, SDL_BLENDMODE_BLEND)
        let line = Line(text: text, size: size, texture: texture, width: surface.pointee.w, height: surface.pointee.h)
        lines[key] = line
        return line
    }

    private func forget(_ key: String) {
        if let line = lines.removeValue(forKey: key) { SDL_DestroyTexture(line.texture) }
    }

    private func font(size: Int32) -> OpaquePointer? {
        if let font = fonts[size] { return font }
        guard let fontPath else { return nil }
        guard let font = TTF_OpenFont(fontPath, size) else {
            complain("TTF_OpenFont(\(fontPath)): \(sdlError())")
            return nil
        }
        fonts[size] = font
        return font
    }

    private func complain(_ message: String) {
        guard !complained else { return }
        complained = true
        log("the idle screen shows no text: \(message)")
    }
}
