internal import CFFmpeg
internal import CSDL2
import Foundation

/// The SDL window, its renderer and the picture's texture. Created, used and destroyed on the SDL thread only
/// (`WindowOutput`'s), so it needs no lock and is not Sendable.
final class WindowRenderer {
    /// What an SDL event means for the window.
    enum EventOutcome {
        case nothing
        /// The window must be drawn again (exposed, resized, shown).
        case redraw
        /// The user closed the window: it was hidden, playback goes on.
        case closedByUser
    }

    /// The window's size when it shows no video (the contract: 1280×720 when idle).
    static let idleSize = (width: 1280, height: 720)

    private let window: OpaquePointer
    private let renderer: OpaquePointer
    private var texture: OpaquePointer?
    /// The texture's SDL pixel format and size in pixels.
    private var textureFormat: (format: UInt32, width: Int32, height: Int32)?
    /// The picture's size with square pixels (after the sample aspect ratio).
    private var displaySize: (width: Double, height: Double)?
    /// swscale's context and output frame, for pixel formats that SDL cannot take.
    private var scaler: OpaquePointer?
    private var converted: UnsafeMutablePointer<AVFrame>?
    private var mode = WindowOutput.DisplayMode.windowed
    private var scaling = ScalingMode.aspectFit
    private var hidden = true
    /// Whether the mouse pointer shows over the window (CastMedia's own window only: an application's is its own).
    private var pointer = PointerVisibility()
    private(set) var isIdle = true
    /// What the idle screen shows, and who draws it.
    private var idleScreen = IdleScreen()
    private let idleText: IdleScreenRenderer
    /// Lines drawn under the picture (see `WindowOutput.show(_:caption:)`); the picture then fits the space above.
    var caption: [String] = []
    /// A mirrored sender's pointer, over the picture.
    let cursor = CursorOverlay()
    /// Where failed SDL and swscale calls are reported (the window's newest user's log).
    var log = MediaLog.silent {
        didSet { idleText.log = log }
    }
    /// With a caption: the share of the height the picture may take, and where its lines go (see `IdleScreen`).
    static let captionedPictureHeight = 0.74
    static let captionRows = [(row: 0.83, size: 0.065), (row: 0.92, size: 0.045)]

    /// Sets the hints that keep SDL from taking over the process (its SIGINT/SIGTERM handlers would turn castd's
    /// graceful shutdown into an SDL_QUIT event) and initialises SDL's video; returns the wake-up event type.
    /// The caller calls SDL_Quit when this throws.
    static func initializeSDL() throws -> UInt32 {
        SDL_SetHint(SDL_HINT_NO_SIGNAL_HANDLERS, "1")
        SDL_SetHint(SDL_HINT_QUIT_ON_LAST_WINDOW_CLOSE, "0")
        SDL_SetHint(SDL_HINT_APP_NAME, "Cast")
        guard SDL_Init(UInt32(SDL_INIT_VIDEO)) == 0 else {
            var message = "cannot open a video window: SDL_Init(video): \(sdlError())"
            let environment = ProcessInfo.processInfo.environment
            if (environment["DISPLAY"] ?? "").isEmpty && (environment["WAYLAND_DISPLAY"] ?? "").isEmpty {
                message += " (no display: DISPLAY and WAYLAND_DISPLAY are unset and no KMS/DRM device could be used)"
            }
            throw MediaError.other(message)
        }
        // SDL falls back to drivers that show nothing ("offscreen", "dummy") when no display works: that is no display,
        // unless the user asked for one of them by name.
        var driver = SDL_GetCurrentVideoDriver().map { String(cString: $0) } ?? ""
        let requested = ProcessInfo.processInfo.environment["SDL_VIDEODRIVER"] ?? ""
        // With DISPLAY set, X11 is the display meant. SDL's own choice fell to "offscreen" now and then right after a
        // window was closed (one reopening in four, under Xvfb): ask for X11 by name once, which either works or
        // says why X11 does not.
        if ["offscreen", "dummy"].contains(driver) && requested.isEmpty
            && !(ProcessInfo.processInfo.environment["DISPLAY"] ?? "").isEmpty
        {
            SDL_Quit()
            SDL_SetHint(SDL_HINT_VIDEODRIVER, "x11")
            defer { SDL_SetHint(SDL_HINT_VIDEODRIVER, nil) }
            guard SDL_Init(UInt32(SDL_INIT_VIDEO)) == 0 else {
                throw MediaError.other(
                    "cannot open a video window on DISPLAY \(ProcessInfo.processInfo.environment["DISPLAY"] ?? ""): \(sdlError())"
                )
            }
            driver = SDL_GetCurrentVideoDriver().map { String(cString: $0) } ?? ""
        }
        if ["offscreen", "dummy"].contains(driver) && !requested.contains(driver) {
            throw MediaError.other(
                "cannot open a video window: no display (DISPLAY and WAYLAND_DISPLAY are unset or unusable, and no "
                    + "KMS/DRM device could be used; SDL offered only its \(driver) driver)")
        }
        let event = SDL_RegisterEvents(1)
        guard event != UInt32.max else { throw MediaError.other("SDL_RegisterEvents: \(sdlError())") }
        return event
    }

    /// Opens the window for `mode`: CastMedia's own (hidden, at the idle size) or the application's (`hosted`).
    convenience init(mode: WindowOutput.DisplayMode) throws {
        switch mode {
        case .windowed: try self.init(fullscreen: false)
        case .fullscreen: try self.init(fullscreen: true)
        case .hosted(let view): try self.init(hostedIn: view)
        }
    }

    /// Draws into the application's X11 window (SDL_CreateWindowFrom). SDL marks it foreign: it is never resized,
    /// moved, mapped or destroyed here; destroying the renderer leaves the application's window as it was.
    init(hostedIn view: HostedVideo) throws {
        guard view.x11Window != 0, let native = UnsafeRawPointer(bitPattern: view.x11Window),
            let window = SDL_CreateWindowFrom(native)
        else {
            throw MediaError.other(
                "cannot draw into the application's window 0x\(String(view.x11Window, radix: 16)): \(sdlError())")
        }
        // SDL's software renderer, presenting through X11's own framebuffer (XShm or XPutImage into the window): the
        // application made the window with a visual of its choosing, and OpenGL on it (a GL renderer, or the GL
        // texture SDL presents a software framebuffer with unless FRAMEBUFFER_ACCELERATION is 0) drew nothing in
        // most runs under Xvfb. Scaling and colour conversion cost CPU here.
        SDL_SetHint(SDL_HINT_FRAMEBUFFER_ACCELERATION, "0")
        defer { SDL_SetHint(SDL_HINT_FRAMEBUFFER_ACCELERATION, nil) }
        guard let renderer = SDL_CreateRenderer(window, -1, SDL_RENDERER_SOFTWARE.rawValue) else {
            let message = sdlError()
            SDL_DestroyWindow(window)
            throw MediaError.other("cannot draw into the application's window: SDL_CreateRenderer: \(message)")
        }
        self.window = window
        self.renderer = renderer
        self.mode = .hosted(view)
        self.idleText = IdleScreenRenderer(renderer: renderer)
        // The application's window keeps its pointer (SDL's cursor state is the process's: CastMedia's own window
        // may have hidden it).
        _ = SDL_ShowCursor(SDL_ENABLE)
    }

    /// Whether this renderer can show `mode` by changing settings, without a window of another kind: CastMedia's own
    /// window goes windowed or full screen; a hosted one stays in its application's window (its colour may change).
    func canShow(_ mode: WindowOutput.DisplayMode) -> Bool {
        switch (self.mode, mode) {
        case (.windowed, .windowed), (.windowed, .fullscreen), (.fullscreen, .windowed), (.fullscreen, .fullscreen):
            return true
        case (.hosted(let current), .hosted(let wanted)):
            return current.x11Window == wanted.x11Window
        default:
            return false
        }
    }

    /// The application's window this renderer draws into, if any.
    private var hosted: HostedVideo? {
        if case .hosted(let view) = mode { view } else { nil }
    }

    /// Opens the window, hidden, at the idle size, and its renderer.
    init(fullscreen: Bool) throws {
        let centered = cast_sdl_windowpos_centered()
        var flags = SDL_WINDOW_HIDDEN.rawValue | SDL_WINDOW_RESIZABLE.rawValue
        if fullscreen { flags |= SDL_WINDOW_FULLSCREEN_DESKTOP.rawValue }
        // Full screen is created at the display's size: without a window manager (a media box's bare X server, the
        // lab's Xvfb) nobody acts on SDL's request for full screen, and the window would keep the idle size.
        let bounds = fullscreen ? Self.displayBounds(0) : nil
        guard
            let window = SDL_CreateWindow(
                "Cast", bounds?.x ?? centered, bounds?.y ?? centered, bounds?.w ?? Int32(Self.idleSize.width),
                bounds?.h ?? Int32(Self.idleSize.height), flags)
        else { throw MediaError.other("cannot open a video window: SDL_CreateWindow: \(sdlError())") }
        // No PRESENTVSYNC: presenting must never block the SDL thread for a refresh period.
        guard let renderer = Self.makeRenderer(for: window) else {
            let message = sdlError()
            SDL_DestroyWindow(window)
            throw MediaError.other("cannot open a video window: SDL_CreateRenderer: \(message)")
        }
        self.window = window
        self.renderer = renderer
        self.mode = fullscreen ? .fullscreen : .windowed
        self.idleText = IdleScreenRenderer(renderer: renderer)
        // A media box's screen shows no pointer until the mouse moves (`PointerVisibility`).
        _ = SDL_ShowCursor(SDL_DISABLE)
    }

    /// SDL's first choice of renderer for `window` (OpenGL where there is one), unless that OpenGL is drawn by the CPU
    /// (Mesa's llvmpipe or softpipe: a machine or virtual machine without a GPU, the lab's Xvfb): then SDL's software
    /// renderer, presenting through X11's own framebuffer (MIT-SHM). CPU-drawn OpenGL runs a colour-converting shader
    /// over every pixel of every picture and copies the result out again: it was most of a mirror session's CPU in
    /// castd and the largest part of its glass to glass (docs/performance.md).
    private static func makeRenderer(for window: OpaquePointer) -> OpaquePointer? {
        guard let first = SDL_CreateRenderer(window, -1, 0) else { return nil }
        guard drawsOpenGLOnTheCPU(first) else { return first }
        SDL_DestroyRenderer(first)
        // Without this SDL would present the software renderer's pictures through an OpenGL texture again.
        SDL_SetHint(SDL_HINT_FRAMEBUFFER_ACCELERATION, "0")
        defer { SDL_SetHint(SDL_HINT_FRAMEBUFFER_ACCELERATION, nil) }
        return SDL_CreateRenderer(window, -1, SDL_RENDERER_SOFTWARE.rawValue) ?? SDL_CreateRenderer(window, -1, 0)
    }

    /// Whether `renderer` is OpenGL (or OpenGL ES) whose GL_RENDERER names one of Mesa's CPU rasterisers. The
    /// renderer's context is current on this thread once SDL created it.
    private static func drawsOpenGLOnTheCPU(_ renderer: OpaquePointer) -> Bool {
        var info = SDL_RendererInfo()
        guard SDL_GetRendererInfo(renderer, &info) == 0, let name = info.name,
            String(cString: name).hasPrefix("opengl"),
            let address = SDL_GL_GetProcAddress("glGetString")
        else { return false }
        typealias GetString = @convention(c) (UInt32) -> UnsafePointer<UInt8>?
        let glRenderer: UInt32 = 0x1F01
        guard let text = unsafeBitCast(address, to: GetString.self)(glRenderer) else { return false }
        let drawnBy = String(cString: text).lowercased()
        return ["llvmpipe", "softpipe", "software rasterizer"].contains { drawnBy.contains($0) }
    }

    /// The name of the SDL renderer that draws ("software", "opengl", …): tests.
    var rendererName: String {
        var info = SDL_RendererInfo()
        guard SDL_GetRendererInfo(renderer, &info) == 0, let name = info.name else { return "" }
        return String(cString: name)
    }

    /// Frees everything; SDL_Quit follows.
    func destroy() {
        cursor.destroy()
        if let texture { SDL_DestroyTexture(texture) }
        texture = nil
        idleText.destroy()
        SDL_DestroyRenderer(renderer)
        SDL_DestroyWindow(window)
        sws_freeContext(scaler)
        scaler = nil
        av_frame_free(&converted)
    }

    // MARK: Events and requests

    func handle(_ event: SDL_Event) -> EventOutcome {
        if event.type == SDL_MOUSEMOTION.rawValue {
            if hosted == nil, pointer.moved(at: .now) { _ = SDL_ShowCursor(SDL_ENABLE) }
            return .nothing
        }
        // SDL_QUIT (the last window closed, or a signal if SDL had handlers) is ignored: the process's owner decides
        // when to quit, and the window close that causes it is handled below.
        guard event.type == SDL_WINDOWEVENT.rawValue, event.window.windowID == SDL_GetWindowID(window) else {
            return .nothing
        }
        switch UInt32(event.window.event) {
        case SDL_WINDOWEVENT_CLOSE.rawValue where hosted != nil:
            // The application's window: closing it is the application's business.
            return .nothing
        case SDL_WINDOWEVENT_CLOSE.rawValue:
            SDL_HideWindow(window)
            hidden = true
            return .closedByUser
        case SDL_WINDOWEVENT_EXPOSED.rawValue, SDL_WINDOWEVENT_SIZE_CHANGED.rawValue, SDL_WINDOWEVENT_SHOWN.rawValue,
            SDL_WINDOWEVENT_RESTORED.rawValue:
            return .redraw
        default:
            return .nothing
        }
    }

    /// Hides the pointer again once it has been still long enough; called at every turn of the SDL thread's loop.
    func hideStillPointer() {
        if hosted == nil, pointer.elapsed(to: .now) { _ = SDL_ShowCursor(SDL_DISABLE) }
    }

    /// Tests: queues the event that the window manager's close button produces.
    func pushCloseEvent() { _ = cast_sdl_push_window_close(window) }

    /// Switches between a window and the whole display; true when something changed.
    func setDisplayMode(_ newMode: WindowOutput.DisplayMode) -> Bool {
        guard newMode != mode else { return false }
        precondition(canShow(newMode), "a renderer of another kind was needed for \(newMode)")
        mode = newMode
        // A hosted window's colour changed: nothing else to do.
        if hosted != nil { return true }
        let flags = newMode == .fullscreen ? SDL_WINDOW_FULLSCREEN_DESKTOP.rawValue : 0
        // As at creation: the display's size first, for an X server without a window manager (a window in full
        // screen ignores SDL_SetWindowSize, so before the switch).
        if newMode == .fullscreen, let bounds = Self.displayBounds(SDL_GetWindowDisplayIndex(window)) {
            SDL_SetWindowPosition(window, bounds.x, bounds.y)
            SDL_SetWindowSize(window, bounds.w, bounds.h)
        }
        if SDL_SetWindowFullscreen(window, flags) != 0 {
            // Keep going in whatever mode SDL left the window: a picture in a window beats no picture.
            log("SDL_SetWindowFullscreen: \(sdlError())")
        }
        fitWindow()
        return true
    }

    /// Changes the scaling mode; true when it changed.
    func setScaling(_ newScaling: ScalingMode) -> Bool {
        guard newScaling != scaling else { return false }
        scaling = newScaling
        return true
    }

    /// Changes what the idle screen shows; true when it changed.
    func setIdleScreen(_ screen: IdleScreen) -> Bool {
        guard screen != idleScreen else { return false }
        idleScreen = screen
        return true
    }

    func show() {
        guard hidden else { return }
        hidden = false
        // The application maps and unmaps its own window.
        guard hosted == nil else { return }
        SDL_ShowWindow(window)
        fitWindow()
    }

    /// Unmaps the window (it keeps its contents' state; `show` maps it again); stops drawing into a hosted one.
    func hide() {
        guard !hidden else { return }
        hidden = true
        guard hosted == nil else { return }
        SDL_HideWindow(window)
    }

    /// Shows the idle screen from the next draw on.
    func becomeIdle() {
        isIdle = true
        fitWindow()
    }

    /// The bounds of display `index` (the first when SDL does not know), nil when SDL cannot say.
    private static func displayBounds(_ index: Int32) -> (x: Int32, y: Int32, w: Int32, h: Int32)? {
        var rect = SDL_Rect()
        guard SDL_GetDisplayBounds(max(index, 0), &rect) == 0, rect.w > 0, rect.h > 0 else { return nil }
        return (rect.x, rect.y, rect.w, rect.h)
    }

    /// A window (not full screen) takes the picture's natural size, or the idle size, centred on the display.
    private func fitWindow() {
        guard mode == .windowed else { return }
        var width = Int32(Self.idleSize.width)
        var height = Int32(Self.idleSize.height)
        if !isIdle, let displaySize {
            width = Int32(max(displaySize.width.rounded(), 1))
            height = Int32(max(displaySize.height.rounded(), 1))
        }
        var current = (width: Int32(0), height: Int32(0))
        SDL_GetWindowSize(window, &current.width, &current.height)
        guard current != (width, height) else { return }
        SDL_SetWindowSize(window, width, height)
        let centered = cast_sdl_windowpos_centered()
        SDL_SetWindowPosition(window, centered, centered)
    }

    // MARK: Pictures

    /// Puts `frame`'s picture into the texture, converting it with swscale only when SDL cannot take its pixel
    /// format. A picture that cannot be shown is skipped with a message: the window must not stop playback.
    func upload(_ frame: Frame) {
        let f = frame.pointer
        let width = f.pointee.width
        let height = f.pointee.height
        guard width > 0, height > 0 else { return }
        let sar = f.pointee.sample_aspect_ratio
        let aspect = sar.num > 0 && sar.den > 0 ? av_q2d(sar) : 1
        let size = (width: Double(width) * aspect, height: Double(height))
        let sizeChanged = displaySize.map { $0 != size } ?? true
        displaySize = size
        let wasIdle = isIdle
        isIdle = false
        if sizeChanged || wasIdle { fitWindow() }

        var source = UnsafePointer(f)
        var format = Self.sdlFormat(for: AVPixelFormat(f.pointee.format))
        let planesPositive = (0..<3).allSatisfy { plane in linesize(f, plane) >= 0 }
        if format == nil || !planesPositive {
            guard let result = convert(f) else { return }
            source = UnsafePointer(result.frame)
            format = result.format
        }
        guard let format else { return }
        SDL_SetYUVConversionMode(Self.conversionMode(for: source))
        guard prepareTexture(format: format, width: width, height: height), let texture else { return }
        let s = source.pointee
        let status: Int32
        switch format {
        case SDL_PIXELFORMAT_IYUV.rawValue:
            status = SDL_UpdateYUVTexture(
                texture, nil, s.data.0, s.linesize.0, s.data.1, s.linesize.1, s.data.2, s.linesize.2)
        case SDL_PIXELFORMAT_NV12.rawValue, SDL_PIXELFORMAT_NV21.rawValue:
            status = SDL_UpdateNVTexture(texture, nil, s.data.0, s.linesize.0, s.data.1, s.linesize.1)
        default:
            status = SDL_UpdateTexture(texture, nil, s.data.0, s.linesize.0)
        }
        if status != 0 { log("SDL_UpdateTexture: \(sdlError())") }
    }

    /// Clears to the background (black in CastMedia's own window) and draws the picture as the scaling mode places
    /// it, or the idle screen (in an application's window: only the background).
    func draw() {
        guard !hidden else { return }
        let background = hosted?.background ?? .black
        SDL_SetRenderDrawColor(renderer, background.red, background.green, background.blue, 255)
        SDL_RenderClear(renderer)
        var output = (width: Int32(0), height: Int32(0))
        SDL_GetRendererOutputSize(renderer, &output.width, &output.height)
        if isIdle && hosted != nil {
            // Nothing plays in the application's window: its background only.
        } else if isIdle {
            idleText.draw(idleScreen, width: output.width, height: output.height)
        } else if let texture, let textureFormat, let displaySize {
            let pictureHeight =
                caption.isEmpty ? output.height : Int32(Double(output.height) * Self.captionedPictureHeight)
            let layout = VideoLayout(
                mode: scaling, pictureWidth: Int(textureFormat.width), pictureHeight: Int(textureFormat.height),
                displayWidth: displaySize.width, displayHeight: displaySize.height,
                outputWidth: Int(output.width), outputHeight: Int(pictureHeight))
            var source = SDL_Rect(layout.source)
            var destination = SDL_Rect(layout.destination)
            SDL_RenderCopy(renderer, texture, &source, &destination)
            cursor.draw(renderer, source: layout.source, destination: layout.destination)
            let lines = zip(caption, Self.captionRows).map { line, place in
                (key: "caption\(place.row)", text: line, size: place.size, row: place.row)
            }
            idleText.drawLines(lines, width: output.width, height: output.height, keeping: ["name", "pin"])
        }
        SDL_RenderPresent(renderer)
    }

    private func prepareTexture(format: UInt32, width: Int32, height: Int32) -> Bool {
        if let textureFormat, textureFormat == (format, width, height), texture != nil { return true }
        if let texture { SDL_DestroyTexture(texture) }
        texture = SDL_CreateTexture(renderer, format, Int32(SDL_TEXTUREACCESS_STREAMING.rawValue), width, height)
        guard let texture else {
            textureFormat = nil
            log("SDL_CreateTexture: \(sdlError())")
            return false
        }
        SDL_SetTextureBlendMode(texture, SDL_BLENDMODE_NONE)
        textureFormat = (format, width, height)
        return true
    }

    /// Converts `f` with swscale: to packed BGRA when it carries RGB or alpha, otherwise to YUV 4:2:0.
    private func convert(_ f: UnsafeMutablePointer<AVFrame>) -> (frame: UnsafeMutablePointer<AVFrame>, format: UInt32)?
    {
        let sourceFormat = AVPixelFormat(f.pointee.format)
        var rgb = false
        if let descriptor = av_pix_fmt_desc_get(sourceFormat) {
            rgb = descriptor.pointee.flags & UInt64(AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_ALPHA) != 0
        }
        let target = rgb ? AV_PIX_FMT_BGRA : AV_PIX_FMT_YUV420P
        let width = f.pointee.width
        let height = f.pointee.height
        scaler = sws_getCachedContext(
            scaler, width, height, sourceFormat, width, height, target, SWS_BILINEAR, nil, nil, nil)
        guard let scaler else {
            log("sws_getCachedContext: unsupported pixel format")
            return nil
        }
        if let c = converted,
            c.pointee.width != width || c.pointee.height != height || c.pointee.format != target.rawValue
        {
            av_frame_free(&converted)
        }
        if converted == nil {
            guard let c = av_frame_alloc() else { return nil }
            c.pointee.width = width
            c.pointee.height = height
            c.pointee.format = target.rawValue
            guard av_frame_get_buffer(c, 0) >= 0 else {
                var doomed: UnsafeMutablePointer<AVFrame>? = c
                av_frame_free(&doomed)
                return nil
            }
            converted = c
        }
        guard let converted else { return nil }
        let status = sws_scale_frame(scaler, converted, f)
        guard status >= 0 else {
            log("sws_scale_frame: \(ffmpegMessage(status))")
            return nil
        }
        converted.pointee.color_range = AVCOL_RANGE_MPEG
        // swscale changes the sampling of YUV, not its matrix: a BT.709 picture stays BT.709 (SDL must know).
        converted.pointee.colorspace = rgb ? AVCOL_SPC_BT470BG : f.pointee.colorspace
        return (converted, rgb ? SDL_PIXELFORMAT_ARGB8888.rawValue : SDL_PIXELFORMAT_IYUV.rawValue)
    }

    /// The SDL texture format that holds FFmpeg's `format` as it is (ffplay's table), or nil: convert first.
    static func sdlFormat(for format: AVPixelFormat) -> UInt32? {
        switch format {
        case AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUVJ420P: return SDL_PIXELFORMAT_IYUV.rawValue
        case AV_PIX_FMT_NV12: return SDL_PIXELFORMAT_NV12.rawValue
        case AV_PIX_FMT_NV21: return SDL_PIXELFORMAT_NV21.rawValue
        case AV_PIX_FMT_YUYV422: return SDL_PIXELFORMAT_YUY2.rawValue
        case AV_PIX_FMT_UYVY422: return SDL_PIXELFORMAT_UYVY.rawValue
        case AV_PIX_FMT_RGB24: return SDL_PIXELFORMAT_RGB24.rawValue
        case AV_PIX_FMT_BGR24: return SDL_PIXELFORMAT_BGR24.rawValue
        // FFmpeg names bytes in memory order, SDL names 32-bit words: on little-endian BGRA is ARGB8888.
        case AV_PIX_FMT_BGRA: return SDL_PIXELFORMAT_ARGB8888.rawValue
        case AV_PIX_FMT_RGBA: return SDL_PIXELFORMAT_ABGR8888.rawValue
        case AV_PIX_FMT_BGR0: return SDL_PIXELFORMAT_RGB888.rawValue
        case AV_PIX_FMT_RGB0: return SDL_PIXELFORMAT_BGR888.rawValue
        default: return nil
        }
    }

    /// SDL's YUV→RGB matrix for the frame's colour space and range (as ffplay chooses it).
    private static func conversionMode(for f: UnsafePointer<AVFrame>) -> SDL_YUV_CONVERSION_MODE {
        if f.pointee.color_range == AVCOL_RANGE_JPEG { return SDL_YUV_CONVERSION_JPEG }
        switch f.pointee.colorspace {
        case AVCOL_SPC_BT709: return SDL_YUV_CONVERSION_BT709
        case AVCOL_SPC_BT470BG, AVCOL_SPC_SMPTE170M: return SDL_YUV_CONVERSION_BT601
        default: return SDL_YUV_CONVERSION_AUTOMATIC
        }
    }

    private func linesize(_ f: UnsafeMutablePointer<AVFrame>, _ plane: Int) -> Int32 {
        switch plane {
        case 0: return f.pointee.linesize.0
        case 1: return f.pointee.linesize.1
        default: return f.pointee.linesize.2
        }
    }
}

/// SDL's last error message.
func sdlError() -> String { String(cString: SDL_GetError()) }

extension SDL_Rect {
    init(_ rect: PixelRect) {
        self.init(x: Int32(rect.x), y: Int32(rect.y), w: Int32(rect.width), h: Int32(rect.height))
    }
}
